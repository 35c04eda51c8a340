# A gRPC app for the tests (Debian's python3-grpcio): grpc.health.v1 served by hand (Debian has no grpcio-health-checking), an echo method, and a control channel on stdin.
#
# Messages come from grpc_health_messages.py: protobuf's own runtime, independent of the proxy's codec.
#
# stdout, one line each: "listening <port>", then "check <service>" / "watch <service>" / "echo <text>"
# for every call received (so a test sees what reached the app), "user-agent <ua>" after a check,
# "ok" after each control line.
# stdin, one command a line:
#   set <service|-> <SERVING|NOT_SERVING|UNKNOWN|SERVICE_UNKNOWN|NOTFOUND|UNIMPLEMENTED|HANG>
#     (`-` is the service "": the server as a whole; NOTFOUND drops the service: grpc-status 5)
import sys
import threading
from concurrent import futures

import grpc
from grpc_health_messages import Request, Response

STATUSES = {"UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3}
# The server as a whole starts SERVING, or as argv[2] says (a test that must see it NOT_SERVING first).
state = {"": sys.argv[2] if len(sys.argv) > 2 else "SERVING"}
changed = threading.Condition()
out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def check(request, context):
    say("check " + request.service)
    agent = dict(context.invocation_metadata()).get("user-agent")
    if agent:
        say("user-agent " + agent)
    with changed:
        mode = state.get(request.service, "NOTFOUND")
    if mode == "HANG":
        threading.Event().wait(context.time_remaining() or 5)
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "hung on purpose")
    if mode == "NOTFOUND":
        context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
    if mode == "UNIMPLEMENTED":
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "no health here")
    return Response(status=STATUSES[mode])


def watch(request, context):
    say("watch " + request.service)
    last = None
    while context.is_active():
        with changed:
            mode = state.get(request.service, "SERVICE_UNKNOWN")
            if mode == last:
                changed.wait(0.5)
                continue
        last = mode
        yield Response(status=STATUSES.get(mode, 0))


def echo(request, context):
    say("echo " + request.decode("utf-8", "replace"))
    return request


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    health = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health",
        {
            "Check": grpc.unary_unary_rpc_method_handler(check, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString),
            "Watch": grpc.unary_stream_rpc_method_handler(watch, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString),
        },
    )
    app = grpc.method_handlers_generic_handler("test.Echo", {"Say": grpc.unary_unary_rpc_method_handler(echo)})
    server.add_generic_rpc_handlers((health, app))
    port = server.add_insecure_port("127.0.0.1:" + (sys.argv[1] if len(sys.argv) > 1 else "0"))
    server.start()
    say("listening %d" % port)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "set":
            service = "" if parts[1] == "-" else parts[1]
            with changed:
                if parts[2] == "NOTFOUND":
                    state.pop(service, None)
                else:
                    state[service] = parts[2]
                changed.notify_all()
        say("ok")
    server.stop(0)


main()
