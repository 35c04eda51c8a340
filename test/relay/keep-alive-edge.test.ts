// Issue 27.2: POSTs sent at the app's keep-alive edge (T-20 ms … T+100 ms after each answer) never get a 502, with and without its Keep-Alive hint.
import { createServer, type AddressInfo, type Socket } from "node:net";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";

/** An app that closes a connection idle for `idleMs` (as gunicorn, Node and uvicorn do), optionally saying so. */
async function closingApp(t: Test, idleMs: number, hint: boolean) {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    let idle: NodeJS.Timeout | undefined;
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      clearTimeout(idle);
      buffered += chunk.toString("latin1");
      // Each request is a head with Content-Length and its body; answered once whole.
      for (;;) {
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, headEnd))?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        buffered = buffered.slice(headEnd + 4 + length);
        const keepAlive = hint ? `Keep-Alive: timeout=${idleMs / 1000}\r\n` : "";
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n${keepAlive}\r\nok`);
        idle = setTimeout(() => socket.destroy(), idleMs);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const CASES: readonly { readonly idleMs: number; readonly offsets: readonly number[] }[] = [
  { idleMs: 1_000, offsets: [-20, -10, -4, 0, 4, 10, 50, 100] },
  { idleMs: 2_000, offsets: [-20, -4, 0, 4, 20, 100] },
  { idleMs: 5_000, offsets: [-20, 0, 4, 100] },
];

const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;

t.test("POSTs spaced at the edge of the app's idle close: every one 200", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  // Every case at once, each with its own app and daemon (in its own process: the race with the
  // app's close is a real one across processes), so the suite waits about the longest case.
  const runs = CASES.flatMap(({ idleMs, offsets }) =>
    [false, true].map(async (hint) => {
      const app = await closingApp(t, idleMs, hint);
      const daemon = await spawnDaemon(t, bundle.command, ["--upstream", app.url]);
      const statuses: number[] = [];
      statuses.push((await send(daemon.port, "/", { method: "POST", body: "first" })).status);
      for (const offset of offsets) {
        await new Promise((resolve) => setTimeout(resolve, idleMs + offset));
        statuses.push((await send(daemon.port, "/", { method: "POST", body: `at ${offset}` })).status);
      }
      return { name: `app closes idle after ${idleMs} ms${hint ? ", says so" : ""}`, statuses, connections: app.connections(), posts: offsets.length + 1 };
    }),
  );
  for (const run of await Promise.all(runs)) {
    t.same(run.statuses.filter((status) => status !== 200), [], `${run.name}: ${run.posts} POSTs, all 200`);
    t.comment(`${run.name}: ${run.connections} connections for ${run.posts} POSTs`);
  }
});
