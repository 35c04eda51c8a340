# Binds and listens on UDP and unix sockets on command (one line on stdin each, "ok" on stdout after each), for the socket-kind tests.
import os
import socket
import sys

held = {}
for line in sys.stdin:
    verb, name, *rest = line.split()
    reply = "ok"
    if verb == "udp":  # udp NAME: a bound, unconnected UDP socket on 127.0.0.1, a port the kernel picks (the reply names it)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        held[name] = sock
        reply = "ok %d" % sock.getsockname()[1]
    elif verb in ("listen", "bind"):  # listen|bind NAME PATH: a unix stream socket, listening or only bound; @x is abstract
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind("\0" + rest[0][1:] if rest[0].startswith("@") else rest[0])
        if verb == "listen":
            sock.listen()
        held[name] = sock
    elif verb == "close":  # close NAME
        held.pop(name).close()
    elif verb == "unlink":  # unlink NAME PATH: the path removed, the socket kept open
        os.unlink(rest[0])
    print(reply, flush=True)
