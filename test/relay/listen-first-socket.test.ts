// The daemon's start: `listening` logged and the first /health answered once one socket listens, the other 15 of the port joining after.
import { request } from "node:http";
import { Server } from "node:net";
import t from "tap";
import { LISTENING_SOCKETS } from "../../src/relay/accept-group.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";

function health(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/health", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

t.test("start() resolves, `listening` is logged and /health answers 200 while 15 of the sockets are held back", async (t) => {
  let started = false;
  let askedBeforeStart = false;
  let calls = 0;
  let letGo = false;
  const waiting: (() => void)[] = [];
  const original = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const listen = () => (original as (...rest: unknown[]) => Server).apply(this, args);
    // On a build that binds all 16 before start() resolves, the second comes first: let it through (no hang) and fail below.
    if (calls++ === 0 || letGo || !started) {
      if (calls > 1 && !started) askedBeforeStart = true;
      return listen();
    }
    waiting.push(listen);
    return this;
  } as typeof original;
  t.teardown(() => {
    Server.prototype.listen = original;
  });
  const daemon = await startTestDaemon(t, []);
  started = true;
  t.notOk(askedBeforeStart, "no socket after the first was asked to listen before start() resolved");
  t.ok(daemon.logs.messages().includes("listening"));
  t.equal(await health(daemon.port), 200, "the first /health, on the one socket");
  t.ok(daemon.server.sockets.servers.slice(1).every((server) => !server.listening), "the others still held");
  letGo = true;
  for (const listen of waiting.splice(0)) listen();
  t.equal(await daemon.server.sockets.rest, LISTENING_SOCKETS);
  t.ok(daemon.server.sockets.servers.every((server) => server.listening));
});
