# Many unary calls over one grpcio channel (Debian's python3-grpcio), for --max-connection-age: the channel must follow each GOAWAY to a new connection by itself.
#   grpc-calls.py <addr> <count> <interval_ms>  -> "error <CODE> <details>" per failed call, then "done ok=<n> failed=<m>"
import sys
import time

import grpc


def main():
    addr, count, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1000.0
    channel = grpc.insecure_channel(addr)
    say = channel.unary_unary("/test.Echo/Say")
    ok = failed = 0
    for index in range(count):
        try:
            reply = say(("call %d" % index).encode(), timeout=5)
            if reply == ("call %d" % index).encode():
                ok += 1
            else:
                failed += 1
                print("error WRONG_ANSWER %r" % reply, flush=True)
        except grpc.RpcError as error:
            failed += 1
            print("error %s %s" % (error.code().name, error.details() or ""), flush=True)
        time.sleep(interval)
    print("done ok=%d failed=%d" % (ok, failed), flush=True)
    channel.close()


main()
