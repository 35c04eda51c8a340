# grpc.health.v1's two messages for the tests' Python peers, built by python3-protobuf from a descriptor made here
# (Debian has no grpcio-health-checking): protobuf's own runtime encodes them, independently of the proxy's codec.
from google.protobuf import descriptor_pb2, descriptor_pool

try:
    from google.protobuf.message_factory import GetMessageClass
except ImportError:  # protobuf before 4.21
    from google.protobuf import message_factory

    def GetMessageClass(descriptor):
        return message_factory.MessageFactory().GetPrototype(descriptor)


def build_messages():
    file = descriptor_pb2.FileDescriptorProto(name="health_test.proto", package="grpc.health.v1", syntax="proto3")
    request = file.message_type.add(name="HealthCheckRequest")
    request.field.add(name="service", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    response = file.message_type.add(name="HealthCheckResponse")
    enum = response.enum_type.add(name="ServingStatus")
    for name, number in (("UNKNOWN", 0), ("SERVING", 1), ("NOT_SERVING", 2), ("SERVICE_UNKNOWN", 3)):
        enum.value.add(name=name, number=number)
    response.field.add(
        name="status",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_ENUM,
        type_name=".grpc.health.v1.HealthCheckResponse.ServingStatus",
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return (
        GetMessageClass(pool.FindMessageTypeByName("grpc.health.v1.HealthCheckRequest")),
        GetMessageClass(pool.FindMessageTypeByName("grpc.health.v1.HealthCheckResponse")),
    )


Request, Response = build_messages()
