# A hostile h2c client in raw frames (HPACK from python3-h2's hpack): floods and malformed requests against the proxy.
# h2-hostile.py <port> <scenario>: prints one JSON line: GOAWAY code, RST_STREAM codes and :status per stream, whether the connection closed.
import json
import socket
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def block(headers):
    # A fresh encoder per block, no Huffman: names and values go on the wire exactly as given.
    encoder = hpack.Encoder()
    return encoder.encode(headers, huffman=False)


def request(stream, path="/ok", extra=(), end=True, method="GET"):
    headers = [(":method", method), (":scheme", "http"), (":authority", "proxy.test"), (":path", path)] + list(extra)
    return frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), stream, block(headers))


class Peer:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.buffer = b""
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 65536
        self.result = {"goaway": None, "rst": {}, "status": {}, "closed": False, "sendFailed": False}

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.result["sendFailed"] = True

    def read(self, until, quiet=3.0):
        """Reads frames until `until(result)` holds, the peer closes, or nothing comes for `quiet` seconds."""
        self.sock.settimeout(quiet)
        while not until(self.result):
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                break
            except OSError:
                self.result["closed"] = True
                break
            if not chunk:
                self.result["closed"] = True
                break
            self.buffer += chunk
            while len(self.buffer) >= 9:
                length = struct.unpack(">I", b"\0" + self.buffer[:3])[0]
                if len(self.buffer) < 9 + length:
                    break
                kind, flags = self.buffer[3], self.buffer[4]
                stream = struct.unpack(">I", self.buffer[5:9])[0] & 0x7FFFFFFF
                payload = self.buffer[9:9 + length]
                self.buffer = self.buffer[9 + length:]
                self.on_frame(kind, flags, stream, payload)
        return self.result

    def on_frame(self, kind, flags, stream, payload):
        if kind == SETTINGS and not flags & ACK:
            self.send(frame(SETTINGS, ACK, 0))
        elif kind == GOAWAY:
            self.result["goaway"] = struct.unpack(">I", payload[4:8])[0]
        elif kind == RST_STREAM:
            self.result["rst"][str(stream)] = struct.unpack(">I", payload[:4])[0]
        elif kind == HEADERS:
            for name, value in self.decoder.decode(payload):
                if name in (":status", b":status"):
                    self.result["status"][str(stream)] = int(value)


def answered(*streams):
    return lambda result: all(str(s) in result["status"] or str(s) in result["rst"] for s in streams) or result["goaway"] is not None


MALFORMED = {
    "uppercase-name": [("X-Upper", "1")],
    "connection-header": [("connection", "keep-alive")],
    "keep-alive-header": [("keep-alive", "5")],
    "transfer-encoding": [("transfer-encoding", "chunked")],
    "upgrade-header": [("upgrade", "h2c")],
    "te-gzip": [("te", "gzip")],
    "cr-in-value": [("x-bad", "a\rb")],
    "lf-in-value": [("x-bad", "a\nb")],
    "nul-in-value": [("x-bad", "a\0b")],
}


def malformed(port, case):
    peer = Peer(port)
    if case in MALFORMED:
        peer.send(request(1, "/malformed-" + case, MALFORMED[case]))
    elif case == "missing-path":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), (":scheme", "http"), (":authority", "a")])))
    elif case == "duplicate-method":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), (":method", "POST"), (":scheme", "http"), (":authority", "a"), (":path", "/malformed-dup")])))
    elif case == "pseudo-after-regular":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), ("x-a", "1"), (":scheme", "http"), (":authority", "a"), (":path", "/malformed-order")])))
    elif case == "unknown-pseudo":
        peer.send(request(1, "/malformed-pseudo", [(":foo", "bar")]))
    elif case == "response-pseudo":
        peer.send(request(1, "/malformed-status", [(":status", "200")]))
    elif case == "space-in-path":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), (":scheme", "http"), (":authority", "a"), (":path", "/malformed-space HTTP/1.1")])))
    elif case == "space-in-method":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET /malformed-method"), (":scheme", "http"), (":authority", "a"), (":path", "/x")])))
    elif case == "space-in-authority":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), (":scheme", "http"), (":authority", "a b"), (":path", "/malformed-authority")])))
    elif case == "non-ascii-path":
        peer.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block([(":method", "GET"), (":scheme", "http"), (":authority", "a"), (":path", "/malformed-caf\u00e9")])))
    elif case == "content-length-longer":
        peer.send(request(1, "/malformed-cl-long", [("content-length", "3")], end=False, method="POST") + frame(DATA, END_STREAM, 1, b"abcdef"))
    elif case == "content-length-shorter":
        peer.send(request(1, "/malformed-cl-short", [("content-length", "10")], end=False, method="POST") + frame(DATA, END_STREAM, 1, b"abc"))
    # A well-formed request after it: a stream error leaves the connection serving.
    peer.send(request(3, "/after"))
    return peer.read(answered(1, 3))


def main():
    port, scenario = int(sys.argv[1]), sys.argv[2]
    if scenario.startswith("malformed:"):
        result = malformed(port, scenario.split(":", 1)[1])
    elif scenario == "header-list":
        peer = Peer(port)
        # 20 KB of fields in HEADERS + CONTINUATION frames within the 16 KiB frame size.
        encoded = block([(":method", "GET"), (":scheme", "http"), (":authority", "a"), (":path", "/big-headers")] + [(f"x-h{index}", "v" * 200) for index in range(100)])
        pieces = [encoded[at:at + 8192] for at in range(0, len(encoded), 8192)]
        peer.send(frame(HEADERS, END_STREAM, 1, pieces[0]) + b"".join(frame(CONTINUATION, END_HEADERS if at == len(pieces) - 1 else 0, 1, piece) for at, piece in enumerate(pieces) if at > 0))
        peer.send(request(3, "/after"))
        result = peer.read(answered(1, 3))
    elif scenario == "too-many-streams":
        peer = Peer(port)
        peer.read(lambda r: False, quiet=0.5)  # the proxy's SETTINGS, and our ACK of it
        peer.send(b"".join(request(1 + 2 * index, "/hold", end=False, method="POST") for index in range(int(sys.argv[3]) if len(sys.argv) > 3 else 101)))
        result = peer.read(lambda r: "201" in r["rst"] or r["goaway"] is not None)
    elif scenario == "rapid-reset":
        peer = Peer(port)
        batch = b"".join(request(1 + 2 * index, "/reset") + frame(RST_STREAM, 0, 1 + 2 * index, struct.pack(">I", 8)) for index in range(20000))
        peer.send(batch)
        result = peer.read(lambda r: r["goaway"] is not None)
    elif scenario == "continuation-flood":
        peer = Peer(port)
        peer.send(frame(HEADERS, 0, 1, block([(":method", "GET"), (":scheme", "http"), (":authority", "a"), (":path", "/cont")])))
        peer.send(b"".join(frame(CONTINUATION, 0, 1, block([("x-c", "v")])) for _ in range(20000)))
        result = peer.read(lambda r: r["goaway"] is not None)
    elif scenario == "settings-flood":
        peer = Peer(port)
        peer.send(frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 65535)) * 400000)
        result = peer.read(lambda r: r["goaway"] is not None or r["closed"])
    elif scenario == "ping-flood":
        peer = Peer(port)
        peer.send(frame(PING, 0, 0, b"12345678") * 400000)
        result = peer.read(lambda r: r["goaway"] is not None or r["closed"])
    elif scenario == "empty-data-flood":
        peer = Peer(port)
        peer.send(request(1, "/empty-data", end=False, method="POST") + frame(DATA, 0, 1) * 20000)
        result = peer.read(lambda r: r["goaway"] is not None or r["closed"])
    print(json.dumps(result), flush=True)


main()
