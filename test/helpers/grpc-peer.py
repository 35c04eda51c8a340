# A gRPC app and client (Debian's python3-grpcio, no protoc: bytes in, bytes out) for the proxy's h2 tests.
# app: serves test.Echo on 127.0.0.1:0 and prints its port.
# client <port> <scenario>: runs one scenario through the proxy and prints one JSON line of results.
import json
import sys
import threading
import time
from concurrent import futures

import grpc

IDENTITY = dict(request_deserializer=None, response_serializer=None)
released = threading.Semaphore(0)
started = []
cancelled = []


def unary(request, context):
    if request == b"fail":
        context.set_trailing_metadata((("x-app-trailer", "failing"),))
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad thing: caf\u00e9")
    context.set_trailing_metadata((("x-app-trailer", "yes"),))
    seen = {key: value for key, value in context.invocation_metadata()}
    remaining = context.time_remaining()
    return json.dumps({"echo": request.decode("latin1"), "te": seen.get("te"), "xff": seen.get("x-forwarded-for"),
                       "deadline": remaining is not None and remaining < 1000}).encode()


def big(request, context):
    return bytes(reversed(request)) if request else b"x" * (3 * 1024 * 1024)


def server_stream(request, context):
    # Message i+1 is made only after the client said it got message i (a Release call): each must arrive as sent.
    for index in range(int(request.decode())):
        yield f"message {index}".encode()
        if not released.acquire(timeout=10):
            return


def release(request, context):
    released.release()
    return b"released"


def client_stream(requests, context):
    count = 0
    total = 0
    for message in requests:
        count += 1
        total += len(message)
    return json.dumps({"count": count, "bytes": total}).encode()


def bidi(requests, context):
    for message in requests:
        yield b"echo " + message


def wait(request, context):
    done = threading.Event()
    started.append(request.decode())
    context.add_callback(lambda: (cancelled.append(request.decode()), done.set()))
    done.wait(30)
    return b"never"


def cancelled_calls(request, context):
    return json.dumps({"started": started, "cancelled": cancelled}).encode()


def run_app():
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Big": grpc.unary_unary_rpc_method_handler(big),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
        "Release": grpc.unary_unary_rpc_method_handler(release),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
        "Wait": grpc.unary_unary_rpc_method_handler(wait),
        "Cancelled": grpc.unary_unary_rpc_method_handler(cancelled_calls),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64),
                         options=[("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Echo", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


def status_of(error):
    return {"code": error.code().name, "details": error.details(),
            "trailers": {key: value for key, value in (error.trailing_metadata() or ())}}


def run_drain(port, app_port):
    # A server stream through the proxy; between messages the test drains the proxy (told on stdout,
    # answered on stdin), and the app is released over a channel of its own (the proxy takes no new calls).
    stream = grpc.insecure_channel(f"127.0.0.1:{port}").unary_stream("/test.Echo/ServerStream")(b"3", timeout=20)
    release_call = grpc.insecure_channel(f"127.0.0.1:{app_port}").unary_unary("/test.Echo/Release")
    got = []
    for message in stream:
        got.append(message.decode())
        if len(got) == 1:
            print("first", flush=True)
            sys.stdin.readline()
        release_call(b"", timeout=10)
    print(json.dumps({"messages": got, "code": stream.code().name}), flush=True)


def run_client(port, scenario):
    channel = grpc.insecure_channel(f"127.0.0.1:{port}",
                                    options=[("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)])
    call = lambda name: channel.unary_unary(f"/test.Echo/{name}")
    out = {}
    if scenario == "unary":
        response, state = call("Unary").with_call(b"hello", timeout=10)
        out = {"response": json.loads(response), "trailers": {key: value for key, value in state.trailing_metadata()}, "code": state.code().name}
    elif scenario == "status":
        try:
            call("Unary")(b"fail", timeout=10)
        except grpc.RpcError as error:
            out = status_of(error)
    elif scenario == "server-stream":
        stream = channel.unary_stream("/test.Echo/ServerStream")(b"3", timeout=10)
        got = []
        for message in stream:
            got.append(message.decode())
            call("Release")(b"", timeout=10)
        out = {"messages": got, "code": stream.code().name}
    elif scenario == "client-stream":
        response = channel.stream_unary("/test.Echo/ClientStream")(iter([b"a" * 10, b"b" * 1000, b"c" * 100000]), timeout=10)
        out = json.loads(response)
    elif scenario == "bidi":
        # Ping-pong: each request is sent only after the answer to the one before came back.
        outbox = threading.Semaphore(1)
        def requests():
            for index in range(5):
                outbox.acquire()
                yield f"ping {index}".encode()
        got = []
        for message in channel.stream_stream("/test.Echo/Bidi")(requests(), timeout=10):
            got.append(message.decode())
            outbox.release()
        out = {"messages": got}
    elif scenario == "big":
        downloaded = call("Big")(b"", timeout=20)
        payload = bytes(range(256)) * (3 * 1024 * 4)
        uploaded = call("Big")(payload, timeout=20)
        out = {"download": len(downloaded), "upload": len(uploaded), "reversed": uploaded == bytes(reversed(payload))}
    elif scenario == "concurrent":
        pending = [call("Unary").future(str(index).encode(), timeout=20) for index in range(200)]
        echoes = [json.loads(future.result())["echo"] for future in pending]
        out = {"ok": sum(1 for index, echo in enumerate(echoes) if echo == str(index))}
    elif scenario == "cancel":
        future = call("Wait").future(b"cancel-me", timeout=20)
        seen = {"started": [], "cancelled": []}
        deadline = time.time() + 10
        while time.time() < deadline and "cancel-me" not in seen["started"]:
            seen = json.loads(call("Cancelled")(b"", timeout=5))
        future.cancel()
        while time.time() < deadline and "cancel-me" not in seen["cancelled"]:
            seen = json.loads(call("Cancelled")(b"", timeout=5))
        out = seen
    elif scenario == "deadline":
        started = time.time()
        try:
            call("Wait")(b"deadline", timeout=0.5)
        except grpc.RpcError as error:
            out = status_of(error)
        out["seconds"] = time.time() - started
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "app":
        run_app()
    elif sys.argv[1] == "drain":
        run_drain(int(sys.argv[2]), int(sys.argv[3]))
    else:
        run_client(int(sys.argv[2]), sys.argv[3])
