# A grpcio client for the tests (Debian's python3-grpcio), one line of stdout per event, flushed at once.
#   check <addr> <service>   -> "status <NAME>" or "error <CODE> <details>"
#   watch <addr> <service>   -> "status <NAME>" per message, then "end <CODE> <details>" when the stream ends
#   call <addr> <method>     -> one unary call with an empty message: "ok" or "error <CODE> <details>"
# `-` as the service is "".
import sys

import grpc
from grpc_health_messages import Request, Response

NAMES = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    mode, addr, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    service = "" if arg == "-" else arg
    channel = grpc.insecure_channel(addr)
    try:
        if mode == "check":
            check = channel.unary_unary("/grpc.health.v1.Health/Check", request_serializer=Request.SerializeToString, response_deserializer=Response.FromString)
            say("status " + NAMES.get(check(Request(service=service), timeout=5).status, "?"))
        elif mode == "watch":
            watch = channel.unary_stream("/grpc.health.v1.Health/Watch", request_serializer=Request.SerializeToString, response_deserializer=Response.FromString)
            stream = watch(Request(service=service), timeout=60)
            for reply in stream:
                say("status " + NAMES.get(reply.status, "?"))
            say("end %s %s" % (stream.code().name, stream.details() or ""))
        elif mode == "call":
            call = channel.unary_unary(arg)
            call(b"", timeout=5)
            say("ok")
    except grpc.RpcError as error:
        if mode == "watch":
            say("end %s %s" % (error.code().name, error.details() or ""))
        else:
            say("error %s %s" % (error.code().name, error.details() or ""))
    channel.close()


main()
