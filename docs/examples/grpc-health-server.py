# A small gRPC server for the README's HTTP/2 example: grpc.health.v1 Check on 127.0.0.1, NOT_SERVING while it "warms up", then SERVING.
#
# Needs grpcio and protobuf only (Debian: apt-get install python3-grpcio python3-protobuf; else
# pip install grpcio protobuf). Usage:
#   python3 docs/examples/grpc-health-server.py [port] [warm-up seconds]   (defaults: 50051 3)
#
# It stands for a real service (a model that loads, a cache that fills): readiness-proxy's
# `upstream` check (--readiness-upstream-grpc-service=) asks its health for the whole server (""),
# so the pod stays NOT_SERVING until this says SERVING. Its messages are built from a descriptor
# made here, so it needs no generated code and no grpcio-health-checking; a real server uses
# grpcio-health-checking (or grpc-go's health package). It has no server reflection: grpcurl
# reads docs/examples/health.proto instead. SIGTERM or SIGINT stops it at once.
import signal
import sys
import threading
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool

try:
    from google.protobuf.message_factory import GetMessageClass
except ImportError:  # protobuf before 4.21
    from google.protobuf import message_factory

    def GetMessageClass(descriptor):
        return message_factory.MessageFactory().GetPrototype(descriptor)


def health_messages():
    """HealthCheckRequest and HealthCheckResponse, as health.proto declares them."""
    file = descriptor_pb2.FileDescriptorProto(name="grpc/health/v1/health.proto", package="grpc.health.v1", syntax="proto3")
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    request = file.message_type.add(name="HealthCheckRequest")
    request.field.add(name="service", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=optional)
    response = file.message_type.add(name="HealthCheckResponse")
    enum = response.enum_type.add(name="ServingStatus")
    for name, number in (("UNKNOWN", 0), ("SERVING", 1), ("NOT_SERVING", 2), ("SERVICE_UNKNOWN", 3)):
        enum.value.add(name=name, number=number)
    response.field.add(name="status", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_ENUM, type_name=".grpc.health.v1.HealthCheckResponse.ServingStatus", label=optional)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return (GetMessageClass(pool.FindMessageTypeByName(f"grpc.health.v1.{name}")) for name in ("HealthCheckRequest", "HealthCheckResponse"))


Request, Response = health_messages()
SERVING, NOT_SERVING = 1, 2
port = int(sys.argv[1]) if len(sys.argv) > 1 else 50051
warm_up_seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
status = {"": NOT_SERVING}


def check(request, context):
    if request.service not in status:
        context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
    return Response(status=status[request.service])


server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
handlers = {"Check": grpc.unary_unary_rpc_method_handler(check, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString)}
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("grpc.health.v1.Health", handlers),))
# Loopback only: clients reach it through the proxy, never around it.
server.add_insecure_port(f"127.0.0.1:{port}")
server.start()
print(f"grpc-health-server: listening on 127.0.0.1:{port}, NOT_SERVING for {warm_up_seconds:g} s", file=sys.stderr, flush=True)


def serve():
    status[""] = SERVING
    print("grpc-health-server: SERVING", file=sys.stderr, flush=True)


threading.Timer(warm_up_seconds, serve).start()
stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
signal.signal(signal.SIGINT, lambda *_: stopped.set())
stopped.wait()
server.stop(grace=None)
sys.exit(0)
