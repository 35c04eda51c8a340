// An open-loop HTTP/1.1 client: GETs due at a fixed rate over keep-alive connections, each timed from when it was due (a stall counts for every request it delays).
import { connect } from "node:net";

/**
 * GETs `path` on 127.0.0.1:`port` at `rate` a second for `seconds`, over `connections` (each one
 * request in flight; a request due while every connection is busy waits, and its wait counts).
 * Resolves to the latencies in µs by 1-s slice of due time, and the errors. Bounded: it stops
 * sending at `seconds` and gives up on answers 5 s later.
 */
export async function fixedRate(port, { path = "/file", rate = 2000, seconds = 10, connections = 50 } = {}) {
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  const slices = Array.from({ length: seconds }, () => []);
  const total = rate * seconds;
  let errors = 0;
  let next = 0;
  const start = performance.now();
  const idle = [];
  const waiting = [];
  const sockets = (await Promise.all(Array.from({ length: connections }, () => open(port)))).map((socket) => ({ socket, pending: "", due: 0 }));
  let answered = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const send = (connection) => {
    const due = waiting.shift();
    if (due === undefined) return idle.push(connection);
    connection.due = due;
    connection.socket.write(request);
  };
  for (const connection of sockets) {
    const socket = connection;
    connection.socket.on("data", (chunk) => {
      // The upstream's 100-byte file: an answer is complete once its head and content-length octets are in.
      socket.pending += chunk.toString("latin1");
      for (;;) {
        const headEnd = socket.pending.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(socket.pending.slice(0, headEnd))?.[1] ?? 0);
        if (socket.pending.length < headEnd + 4 + length) return;
        if (!socket.pending.startsWith("HTTP/1.1 200")) errors++;
        socket.pending = socket.pending.slice(headEnd + 4 + length);
        const slice = Math.floor((socket.due - start) / 1000);
        slices[slice]?.push((performance.now() - socket.due) * 1000);
        if (++answered === total) finish();
        send(socket);
      }
    });
    connection.socket.on("error", () => errors++);
    idle.push(connection);
  }
  const tick = () => {
    const now = performance.now();
    while (next < total && start + (next * 1000) / rate <= now) {
      waiting.push(start + (next * 1000) / rate);
      next++;
      const socket = idle.pop();
      if (socket) send(socket);
    }
    if (next < total) setTimeout(tick, 1);
  };
  tick();
  const guard = setTimeout(finish, (seconds + 5) * 1000);
  await finished;
  clearTimeout(guard);
  for (const connection of sockets) connection.socket.destroy();
  return { slices, errors: errors + (total - answered) };
}

function open(port) {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", noDelay: true });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}
