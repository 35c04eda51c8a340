// Client connections hold a parser only while they read (issue 27): none before their first byte, given back while queued or quiet, lent again when bytes come, with every request served as before.
import { connect, type Socket } from "node:net";
import t, { type Test } from "tap";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { startTestDaemon, type TestDaemon } from "../helpers/in-process-daemon.js";
import { startRecordingUpstream } from "../helpers/recording-upstream.js";
import { untilSeries } from "../helpers/scrape.js";
import { ResponseReader } from "./raw-exchange.js";

/** A bound on every wait for an answer: a wedge fails the test instead of hanging it. */
const ANSWER_LIMIT_MS = 10_000;

/** One keep-alive client connection: raw bytes out, whole responses back, in order. */
class Client {
  readonly socket: Socket;
  readonly #reader = new ResponseReader(() => false);
  #wake: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#reader.push(chunk);
      this.#wake?.();
    });
    socket.on("close", () => this.#wake?.());
  }

  static open(port: number): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port }, () => resolve(new Client(socket)));
      socket.once("error", reject);
    });
  }

  /** Writes `pieces`, a turn of the event loop apart, and resolves to the bodies of the next `responses` answers, with their statuses. */
  async send(pieces: readonly string[], responses = 1): Promise<string[]> {
    const first = this.#reader.finals.length;
    for (const piece of pieces) {
      this.socket.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const deadline = Date.now() + ANSWER_LIMIT_MS;
    while (this.#reader.finals.length < first + responses && !this.socket.destroyed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    return this.#reader.finals.slice(first).map((status, index) => `${status} ${this.#reader.bodies[first + index]!.toString("latin1")}`);
  }
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`;

/** Lets the event loop turn until `done()` or `turns` have gone by (the proxy's close handling is asynchronous). */
async function until(done: () => boolean, turns = 500): Promise<boolean> {
  for (let turn = 0; turn < turns && !done(); turn++) await new Promise((resolve) => setTimeout(resolve, 5));
  return done();
}

function parsers(daemon: TestDaemon) {
  return daemon.server.parsers;
}

t.test("idle connections hold no parser; one lent per reading connection, given back when quiet, lent again for what comes next", async (t: Test) => {
  const app = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const clients = await Promise.all(Array.from({ length: 20 }, () => Client.open(daemon.port)));
  t.teardown(() => clients.forEach((client) => client.socket.destroy()));
  // None has sent a byte (the answers below show the proxy holds each of them).
  t.equal(parsers(daemon).lent, 0, "20 connections that sent nothing: no parser lent");
  for (const [index, client] of clients.entries()) t.same(await client.send([get(`/a/${index}`)]), [`200 /a/${index}`]);
  t.equal(parsers(daemon).lent, 20, "each connection that read keeps its parser meanwhile");
  daemon.server.sweep();
  t.equal(parsers(daemon).lent, 20, "a read since the last sweep: kept");
  daemon.server.sweep();
  t.equal(parsers(daemon).lent, 0, "quiet for a whole sweep: all given back");
  t.ok(parsers(daemon).free > 0 && parsers(daemon).free <= 20, `kept for reuse (${parsers(daemon).free})`);
  app.take();
  // After the parser went back: a body split across reads, then two requests in one write.
  for (const [index, client] of clients.entries()) {
    const body = `body-${index}`;
    t.same(await client.send([`POST /b/${index} HTTP/1.1\r\nHost: test\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`, body.slice(3)]), [`200 /b/${index}`]);
    t.same(await client.send([get(`/c/${index}`) + get(`/d/${index}`)], 2), [`200 /c/${index}`, `200 /d/${index}`], "pipelined after a parser was lent again");
  }
  const recorded = app.take().requests;
  t.same(
    recorded.filter((request) => request.method === "POST").map((request) => Buffer.concat(request.body).toString("latin1")),
    clients.map((_, index) => `body-${index}`),
    "every body reached the app whole",
  );
  t.same(app.parseErrors(), []);
  for (const client of clients) client.socket.destroy();
  t.ok(await until(() => parsers(daemon).lent === 0), "closed connections give their parsers back");
});

t.test("requests waiting in the limiter's queue give their parser back, and are served in order afterwards", async (t: Test) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--max-concurrency", "1", "--queue-timeout", "30s", "--metrics-listen", "127.0.0.1:0"]);
  const holder = await Client.open(daemon.port);
  const held = holder.send([get("/held")]);
  await app.arrivals(1);
  const queued = await Promise.all(Array.from({ length: 10 }, () => Client.open(daemon.port)));
  t.teardown(() => [holder, ...queued].forEach((client) => client.socket.destroy()));
  const answers: Promise<string[]>[] = [];
  for (const [index, client] of queued.entries()) {
    answers.push(client.send([get(`/q/${index}`)]));
    await untilSeries(daemon.metricsPort!, "readiness_proxy_queue_length", index + 1);
  }
  t.equal(parsers(daemon).lent, 1, "10 queued: only the admitted request's connection holds a parser");
  app.arrived[0]!.release("held");
  t.same(await held, ["200 held"]);
  for (let index = 0; index < queued.length; index++) (await app.arrivals(index + 2))[index + 1]!.release(`q${index}`);
  t.same(await Promise.all(answers), queued.map((_, index) => [`200 q${index}`]), "each answered, in queue order");
  t.same(app.arrived.slice(1).map((request) => request.url), queued.map((_, index) => `/q/${index}`));
  // The next request on each: its connection is lent a parser again.
  const next = queued.map((client, index) => client.send([get(`/again/${index}`)]));
  for (let index = 0; index < queued.length; index++) (await app.arrivals(queued.length + 2 + index))[queued.length + 1 + index]!.release("again");
  t.same(await Promise.all(next), queued.map(() => ["200 again"]));
});
