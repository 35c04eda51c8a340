# Raw h2 peers for the defects found from outside (issue 37): a client that resets a claimed gRPC health stream, and an h2c app that sends connection-specific fields.
# h2-defects.py client <port> <scenario>: prints one JSON line (PING acknowledged, GOAWAY code, RST codes, :status per stream, closed).
# h2-defects.py app <mode>: an h2c app on 127.0.0.1; prints "listening <port>", then "trailers <json>" for each request's trailers.
import json
import socket
import struct
import sys
import threading

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
HTTP2_SETTINGS = ("http2-settings", "AAMAAABkAAQAAP__")


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


class Frames:
    """Frames read off one socket; `next()` returns (kind, flags, stream, payload) or None at the close."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def next(self):
        while True:
            if len(self.buffer) >= 9:
                length = struct.unpack(">I", b"\0" + self.buffer[:3])[0]
                if len(self.buffer) >= 9 + length:
                    kind, flags = self.buffer[3], self.buffer[4]
                    stream = struct.unpack(">I", self.buffer[5:9])[0] & 0x7FFFFFFF
                    payload = self.buffer[9:9 + length]
                    self.buffer = self.buffer[9 + length:]
                    return kind, flags, stream, payload
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return None
            if not chunk:
                return None
            self.buffer += chunk


def health_headers(encoder, end=False):
    fields = [(":method", "POST"), (":scheme", "http"), (":authority", "proxy.test"), (":path", "/grpc.health.v1.Health/Check"),
              ("content-type", "application/grpc"), ("te", "trailers")]
    return frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), 1, encoder.encode(fields, huffman=False))


def client(port, scenario):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    frames = Frames(sock)
    encoder = hpack.Encoder()
    decoder = hpack.Decoder()
    result = {"pingAcked": False, "goaway": None, "rst": {}, "status": {}, "closed": False}
    sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
    if scenario.startswith("health-reset-at-once:"):
        sock.sendall(health_headers(encoder) + frame(RST_STREAM, 0, 1, struct.pack(">I", int(scenario.split(":")[1]))))
    elif scenario.startswith("health-"):
        # A claimed health call whose body is cut short: 2 bytes of a 5-byte gRPC prefix, no END_STREAM.
        sock.sendall(health_headers(encoder) + frame(DATA, 0, 1, b"\0\0"))
        if scenario.startswith("health-reset:"):
            sock.sendall(frame(RST_STREAM, 0, 1, struct.pack(">I", int(scenario.split(":")[1]))))
        elif scenario == "health-goaway":
            sock.sendall(frame(GOAWAY, 0, 0, struct.pack(">II", 0, 2)))
        elif scenario == "health-tcp-reset":
            # Wait for the proxy's SETTINGS, leave it unread-for, then close with an RST (SO_LINGER 0).
            frames.next()
            sock.sendall(frame(PING, 0, 0, b"tcpreset"))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            result["closed"] = True
            print(json.dumps(result), flush=True)
            return
    elif scenario == "request-trailers":
        fields = [(":method", "POST"), (":scheme", "http"), (":authority", "proxy.test"), (":path", "/upload"), ("te", "trailers")]
        trailers = [("x-checksum", "abc"), HTTP2_SETTINGS]
        sock.sendall(frame(HEADERS, END_HEADERS, 1, encoder.encode(fields, huffman=False)) + frame(DATA, 0, 1, b"body")
                     + frame(HEADERS, END_HEADERS | END_STREAM, 1, encoder.encode(trailers, huffman=False)))
    elif scenario == "get":
        fields = [(":method", "GET"), (":scheme", "http"), (":authority", "proxy.test"), (":path", "/get")]
        sock.sendall(frame(HEADERS, END_HEADERS | END_STREAM, 1, encoder.encode(fields, huffman=False)))
    # A PING after everything: its ACK says the proxy has read and handled all of it.
    sock.sendall(frame(PING, 0, 0, b"afterall"))
    while True:
        got = frames.next()
        if got is None:
            result["closed"] = True
            break
        kind, flags, stream, payload = got
        if kind == SETTINGS and not flags & ACK:
            sock.sendall(frame(SETTINGS, ACK, 0))
        elif kind == PING and flags & ACK and payload == b"afterall":
            result["pingAcked"] = True
        elif kind == GOAWAY:
            result["goaway"] = struct.unpack(">I", payload[4:8])[0]
        elif kind == RST_STREAM:
            result["rst"][str(stream)] = struct.unpack(">I", payload[:4])[0]
        elif kind == HEADERS:
            for name, value in decoder.decode(payload):
                if name in (":status", b":status"):
                    result["status"].setdefault(str(stream), int(value))
            if flags & END_STREAM:
                result.setdefault("ended", []).append(stream)
        elif kind == DATA and flags & END_STREAM:
            result.setdefault("ended", []).append(stream)
        done = scenario not in ("request-trailers", "get") or "1" in result["rst"] or 1 in result.get("ended", [])
        if result["pingAcked"] and done:
            break
    sock.close()
    print(json.dumps(result), flush=True)


def serve_app(conn, mode, say):
    frames = Frames(conn)
    encoder = hpack.Encoder()
    decoder = hpack.Decoder()
    conn.sendall(frame(SETTINGS, 0, 0))
    blocks = {}
    while True:
        got = frames.next()
        if got is None:
            return
        kind, flags, stream, payload = got
        if kind == SETTINGS and not flags & ACK:
            conn.sendall(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            conn.sendall(frame(PING, ACK, 0, payload))
        elif kind == HEADERS:
            fields = [(name.decode() if isinstance(name, bytes) else name, value.decode() if isinstance(value, bytes) else value) for name, value in decoder.decode(payload)]
            if stream in blocks:
                say("trailers " + json.dumps(fields))
            blocks[stream] = fields
            if flags & END_STREAM:
                answer(conn, encoder, stream, mode)
        elif kind == DATA:
            if payload:
                conn.sendall(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", len(payload))) + frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", len(payload))))
            if flags & END_STREAM:
                answer(conn, encoder, stream, mode)


def answer(conn, encoder, stream, mode):
    out = b""
    if mode == "interim-settings":
        out += frame(HEADERS, END_HEADERS, stream, encoder.encode([(":status", "103"), ("link", "</a.css>; rel=preload"), HTTP2_SETTINGS], huffman=False))
    out += frame(HEADERS, END_HEADERS, stream, encoder.encode([(":status", "200"), ("content-type", "text/plain")], huffman=False))
    out += frame(DATA, 0, stream, b"ok")
    trailers = [("x-app", "done")] + ([HTTP2_SETTINGS] if mode == "trailers-settings" else [])
    out += frame(HEADERS, END_HEADERS | END_STREAM, stream, encoder.encode(trailers, huffman=False))
    conn.sendall(out)


def app(mode):
    lock = threading.Lock()

    def say(line):
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    say("listening %d" % server.getsockname()[1])
    while True:
        conn, _ = server.accept()
        if conn.recv(len(PREFACE), socket.MSG_WAITALL) != PREFACE:
            conn.close()
            continue
        threading.Thread(target=serve_app, args=(conn, mode, say), daemon=True).start()


if __name__ == "__main__":
    if sys.argv[1] == "client":
        client(int(sys.argv[2]), sys.argv[3])
    else:
        app(sys.argv[2])
