// A pooled app connection always reads: one paused for a slow client in the very read that ended its answer reads again once idle, so the next request's answer is read (found by the soak: a GET after the load got no answer for the head timeout).
import { createServer, type AddressInfo, type Socket } from "node:net";
import t, { type Test } from "tap";
import { BODY, type BodyDirective, type ParsedHead } from "../../src/relay/http1/llhttp-binding.js";
import type { UpstreamConnection, UpstreamOwner } from "../../src/relay/http1/upstream-connection.js";
import { UpstreamPool } from "../../src/relay/http1/upstream-pool.js";
import type { UpstreamFailure } from "../../src/relay/upstream-failure.js";

/** An app that answers each request with one write: the head, the body and the end arrive in one read. */
async function startApp(t: Test): Promise<{ port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("data", () => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, sockets };
}

/** An exchange's part as the pool sees it: sends one GET, and on each body chunk may say its client is full, as a client write that returns false does. */
class Owner implements UpstreamOwner {
  readonly ended: Promise<string>;
  #settle!: (outcome: string) => void;
  #body = "";
  connection!: UpstreamConnection;

  constructor(
    readonly pool: UpstreamPool,
    readonly clientFull: boolean,
  ) {
    this.ended = new Promise((resolve) => (this.#settle = resolve));
  }

  send(): void {
    this.connection = this.pool.acquire(this, true);
    this.connection.write("GET / HTTP/1.1\r\nHost: app\r\n\r\n");
    // A stalled read ends as the head timeout's failure, not as a test that never ends.
    this.connection.awaitHead(2_000);
  }

  onConnected(): void {}
  onResponseHead(_head: ParsedHead): BodyDirective {
    return BODY.parse;
  }
  onResponseBody(chunk: Buffer): void {
    this.#body += chunk.toString("latin1");
    if (this.clientFull) this.connection.pauseReading();
  }
  onResponseEnd(keepAlive: boolean): void {
    this.pool.release(this.connection, keepAlive);
    this.#settle(`answered: ${this.#body}`);
  }
  onTunnel(): void {}
  onUpstreamFailure(failure: UpstreamFailure): void {
    this.#settle(`failed: ${failure.code}`);
  }
  onUpstreamDrain(): void {}
  onInternalFault(error: unknown): void {
    this.#settle(`fault: ${String(error)}`);
  }
}

/** A pool (idle for up to a minute: only reading sees the app's close sooner) whose one connection answered a request while its client was full. */
async function pausedAtItsAnswersEnd(t: Test): Promise<{ app: { sockets: Socket[] }; pool: UpstreamPool; first: Owner }> {
  const app = await startApp(t);
  const pool = new UpstreamPool({ address: { host: "127.0.0.1", port: app.port }, idleTimeoutMs: 60_000 });
  t.teardown(() => pool.close());
  const first = new Owner(pool, true);
  first.send();
  t.equal(await first.ended, "answered: hello");
  return { app, pool, first };
}

t.test("paused for a slow client as its answer ended: the next request on it is answered", async (t) => {
  const { app, pool, first } = await pausedAtItsAnswersEnd(t);
  const second = new Owner(pool, false);
  second.send();
  t.equal(second.connection, first.connection, "the pooled connection is reused");
  t.equal(await second.ended, "answered: hello", "its answer is read, not left in the socket until the head timeout");
  t.equal(app.sockets.length, 1);
});

t.test("an idle connection the app closes while it was left paused is not handed out", async (t) => {
  const { app, pool, first } = await pausedAtItsAnswersEnd(t);
  const closed = new Promise<string>((resolve) => first.connection.socket.once("close", () => resolve("closed")));
  app.sockets[0]!.end();
  // A bound on a failure only: a paused connection never sees the FIN.
  const notSeen = new Promise<string>((resolve) => setTimeout(() => resolve("the FIN was not seen"), 3_000).unref());
  t.equal(await Promise.race([closed, notSeen]), "closed", "the app's close ends the idle connection");
  const second = new Owner(pool, false);
  second.send();
  t.not(second.connection, first.connection, "a new connection");
  t.equal(await second.ended, "answered: hello");
});
