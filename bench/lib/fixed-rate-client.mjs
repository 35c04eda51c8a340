// An open-loop HTTP/1.1 client: GETs due at a fixed rate over keep-alive connections, each timed from when it was due (a stall counts for every request it delays).
import { connect } from "node:net";

/**
 * GETs `path` on 127.0.0.1:`port` at `rate` a second for `seconds`, over `connections` (each one
 * request in flight; a request due while every connection is busy waits, and its wait counts).
 * Resolves to the latencies in µs by 1-s slice of due time, and the errors. Bounded: it stops
 * sending at `seconds` and gives up on answers 5 s later.
 * `onSecond(k)` is called as the due clock passes k s (k = 1 .. seconds; a caller samples the
 * server's CPU per slice there). `record`: also `due` and `done`, each answer's due and answered
 * time in epoch ms (the clock the bench preload stamps GCs with), in the order answered.
 */
export async function fixedRate(port, { path = "/file", rate = 2000, seconds = 10, connections = 50, onSecond, record = false } = {}) {
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  const slices = Array.from({ length: seconds }, () => []);
  const total = rate * seconds;
  const due = record ? new Float64Array(total) : undefined;
  const done = record ? new Float64Array(total) : undefined;
  const epoch = performance.timeOrigin;
  let errors = 0;
  let next = 0;
  let secondsPassed = 0;
  const start = performance.now();
  const idle = [];
  const waiting = [];
  const sockets = (await Promise.all(Array.from({ length: connections }, () => open(port)))).map((socket) => ({ socket, pending: "", due: 0 }));
  let answered = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const send = (connection) => {
    const at = waiting.shift();
    if (at === undefined) return idle.push(connection);
    connection.due = at;
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
        const now = performance.now();
        const slice = Math.floor((socket.due - start) / 1000);
        slices[slice]?.push((now - socket.due) * 1000);
        if (record) {
          due[answered] = epoch + socket.due;
          done[answered] = epoch + now;
        }
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
    while (onSecond && secondsPassed < seconds && now - start >= (secondsPassed + 1) * 1000) onSecond(++secondsPassed);
    if (next < total || (onSecond && secondsPassed < seconds)) setTimeout(tick, 1);
  };
  tick();
  const guard = setTimeout(finish, (seconds + 5) * 1000);
  await finished;
  clearTimeout(guard);
  // The last answers can come before the clock passes the last second: that second ends now.
  while (onSecond && secondsPassed < seconds) onSecond(++secondsPassed);
  for (const connection of sockets) connection.socket.destroy();
  return { slices, errors: errors + (total - answered), ...(record && { due: due.subarray(0, answered), done: done.subarray(0, answered) }) };
}

function open(port) {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", noDelay: true });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}
