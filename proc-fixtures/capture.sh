#!/usr/bin/env bash
# Recaptures the kernel-made fixtures: each case runs in a fresh network namespace, so its tables hold only its own sockets.
# Usage (root, iproute2, python3): bash proc-fixtures/capture.sh   — rewrites the captured cases in place.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# capture CASE PYTHON: runs PYTHON in a new netns; when it prints "snap", both tables are copied into CASE/net.
capture() {
  local case=$1 program=$2 ns="rp-fixture-$$"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  mkdir -p "$here/$case/net"
  ip netns exec "$ns" python3 -c "$program" | while read -r line; do
    if [ "$line" = snap ]; then
      ip netns exec "$ns" cat /proc/net/tcp >"$here/$case/net/tcp"
      ip netns exec "$ns" cat /proc/net/tcp6 >"$here/$case/net/tcp6"
    fi
  done
  ip netns del "$ns"
}

prelude='
import socket, sys, time
def listen(family, host, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port)); s.listen(16); return s
def snap():
    print("snap", flush=True); time.sleep(0.3)
'

capture listen-tcp-only "$prelude
a = listen(socket.AF_INET, '127.0.0.1', 15008)
b = listen(socket.AF_INET, '0.0.0.0', 8000)
snap()"

capture listen-tcp6-only "$prelude
a = listen(socket.AF_INET6, '::', 15008)   # dual-stack: shows only in tcp6
snap()"

capture other-port-listening "$prelude
a = listen(socket.AF_INET, '0.0.0.0', 8000)
b = listen(socket.AF_INET6, '::', 9090)
snap()"

capture established-only "$prelude
l = listen(socket.AF_INET, '127.0.0.1', 15008)
c = socket.create_connection(('127.0.0.1', 15008))
s, _ = l.accept()
l.close()   # 15008 stays only as ESTABLISHED: local side of s, remote side of c
c6l = listen(socket.AF_INET6, '::1', 15008)
c6 = socket.create_connection(('::1', 15008))
s6, _ = c6l.accept()
c6l.close()
snap()"

capture time-wait "$prelude
l = listen(socket.AF_INET, '127.0.0.1', 15008)
c = socket.create_connection(('127.0.0.1', 15008))
s, _ = l.accept()
s.close(); time.sleep(0.1); c.close(); l.close()   # the server side closed first: TIME_WAIT on :15008
snap()"

capture ipv4-mapped "$prelude
l = listen(socket.AF_INET6, '::', 15008)
c = socket.create_connection(('127.0.0.1', 15008))   # accepted as ::ffff:127.0.0.1
s, _ = l.accept()
l.close()
m = listen(socket.AF_INET6, '::ffff:127.0.0.1', 8000)  # a LISTEN row on a v4-mapped address
snap()"

capture loopback-addresses "$prelude
a = listen(socket.AF_INET6, '::1', 8000)        # python3 -m http.server 8000 --bind ::1; Node's localhost
b = listen(socket.AF_INET, '127.0.0.2', 8001)   # loopback, but not 127.0.0.1
c = listen(socket.AF_INET, '127.0.0.1', 15008)
snap()"

capture header-only "$prelude
snap()"

# Derived cases: real captures with one deliberate change each (see README.md).
rm -rf "$here/tcp6-missing" && mkdir -p "$here/tcp6-missing/net"
cp "$here/listen-tcp-only/net/tcp" "$here/tcp6-missing/net/tcp"

rm -rf "$here/malformed-header" && mkdir -p "$here/malformed-header/net"
sed '1s/local_address/local_addr/' "$here/listen-tcp-only/net/tcp" >"$here/malformed-header/net/tcp"
cp "$here/listen-tcp-only/net/tcp6" "$here/malformed-header/net/tcp6"

rm -rf "$here/malformed-row" && mkdir -p "$here/malformed-row/net"
sed '2s/:3AA0 /:3AA /' "$here/listen-tcp-only/net/tcp" >"$here/malformed-row/net/tcp"
cp "$here/listen-tcp-only/net/tcp6" "$here/malformed-row/net/tcp6"

rm -rf "$here/empty-file" && mkdir -p "$here/empty-file/net"
: >"$here/empty-file/net/tcp"
cp "$here/listen-tcp6-only/net/tcp6" "$here/empty-file/net/tcp6"

rm -rf "$here/unreadable" && mkdir -p "$here/unreadable/net/tcp"
touch "$here/unreadable/net/tcp/.keep"   # a directory where the file should be: EISDIR, even for root
cp "$here/header-only/net/tcp6" "$here/unreadable/net/tcp6"

rm -rf "$here/found-while-other-unreadable" && mkdir -p "$here/found-while-other-unreadable/net"
cp "$here/listen-tcp-only/net/tcp" "$here/found-while-other-unreadable/net/tcp"
sed '1s/st /state /' "$here/listen-tcp6-only/net/tcp6" >"$here/found-while-other-unreadable/net/tcp6"

rm -rf "$here/missing-while-other-unreadable" && mkdir -p "$here/missing-while-other-unreadable/net"
cp "$here/other-port-listening/net/tcp" "$here/missing-while-other-unreadable/net/tcp"
sed '2s/^ *[0-9]*:/x:/' "$here/other-port-listening/net/tcp6" >"$here/missing-while-other-unreadable/net/tcp6"
echo "fixtures captured in $here"
