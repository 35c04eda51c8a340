// --max-connections on the binary: the longest-idle keep-alive connection is shed first (HTTP/1.1 closed, h2 GOAWAY NO_ERROR), a busy one never, new ones wait unread while every one is busy, and the metrics and warn line say so.
import { createServer, type ServerResponse } from "node:http";
import http2 from "node:http2";
import { connect, type Socket } from "node:net";
import t, { type Test } from "tap";
import { scrapeText, seriesValue, untilSeries } from "../helpers/scrape.js";
import { BINARY, BUILT_ARTIFACTS, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { serveOnLoopback } from "../helpers/upstream.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;

/** An app that answers /hold only when told, and says when such a request arrived. */
async function holdingApp(t: Test): Promise<{ url: string; arrived: () => Promise<ServerResponse> }> {
  const held: ServerResponse[] = [];
  const waiting: Array<(response: ServerResponse) => void> = [];
  const server = createServer((request, response) => {
    if (request.url !== "/hold") return void response.end("ok");
    const waiter = waiting.shift();
    if (waiter) waiter(response);
    else held.push(response);
  });
  const port = await serveOnLoopback(t, server);
  return {
    url: `http://127.0.0.1:${port}`,
    arrived: () => new Promise((resolve) => (held.length > 0 ? resolve(held.shift()!) : waiting.push(resolve))),
  };
}

/** A raw HTTP/1.1 client connection: what it has read, and whether the proxy closed it. */
class RawClient {
  readonly socket: Socket;
  text = "";
  readonly closed: Promise<void>;
  #onData: Array<() => void> = [];

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("data", (chunk: Buffer) => {
      this.text += chunk.toString("latin1");
      for (const wake of this.#onData.splice(0)) wake();
    });
    this.socket.on("error", () => {});
    this.closed = new Promise((resolve) => this.socket.on("close", () => resolve()));
  }

  /** Resolves once what was read contains `text` `count` times. */
  async until(text: string, count = 1): Promise<void> {
    while (this.text.split(text).length - 1 < count) await new Promise<void>((resolve) => this.#onData.push(resolve));
  }

  send(path: string): void {
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
  }

  /** One GET answered (status line counted), the connection left open. */
  async exchange(path: string): Promise<void> {
    const answered = this.text.split("HTTP/1.1 200").length;
    this.send(path);
    await this.until("HTTP/1.1 200", answered);
  }
}

async function start(t: Test, limit: number, upstream: string): Promise<{ daemon: SpawnedDaemon; metricsPort: number }> {
  const daemon = await spawnDaemon(t, [BINARY], ["--max-connections", String(limit), "--upstream", upstream, "--metrics-listen", "127.0.0.1:0", "--log-level", "info"]);
  const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);
  return { daemon, metricsPort };
}

t.test("--max-connections", { skip: !binary.built && "dist/readiness-proxy is not built: run make build" }, async (t) => {
  t.test("at the limit the longest-idle HTTP/1.1 connection is closed for the new one; a busy one never is", async (t) => {
    const app = await holdingApp(t);
    const { daemon, metricsPort } = await start(t, 3, app.url);
    const busy = new RawClient(daemon.port);
    await busy.exchange("/health");
    const oldestIdle = new RawClient(daemon.port);
    await oldestIdle.exchange("/health");
    const newerIdle = new RawClient(daemon.port);
    await newerIdle.exchange("/health");
    // The first connection is the longest idle, until its request reaches the app: busy now.
    busy.send("/hold");
    const response = await app.arrived();
    await untilSeries(metricsPort, "readiness_proxy_client_connections", 3);

    const newcomer = new RawClient(daemon.port);
    await newcomer.exchange("/health");
    await oldestIdle.closed;
    t.match(oldestIdle.text.split("HTTP/1.1 200").length - 1, 1, "closed between requests, after its one answer");
    t.equal(newerIdle.socket.destroyed, false, "the newer idle one stays");
    t.equal(busy.socket.destroyed, false, "the busy one stays");
    response.end("held answer");
    await busy.until("held answer");
    const text = await scrapeText(metricsPort);
    t.equal(seriesValue(text, "readiness_proxy_client_connections_shed_total"), 1);
    t.equal(seriesValue(text, "readiness_proxy_client_connections"), 3, "the metrics listener's own connection is not counted");
    const warn = await daemon.waitForLog("connection limit reached");
    t.match(warn, { level: 40, limit: 3, shed: 1 });
    for (const client of [busy, newerIdle, newcomer]) client.socket.destroy();
  });

  t.test("an idle h2 connection gets GOAWAY NO_ERROR naming its last stream, then the close", async (t) => {
    const app = await holdingApp(t);
    const { daemon, metricsPort } = await start(t, 2, app.url);
    const session = http2.connect(`http://127.0.0.1:${daemon.port}`);
    session.on("error", () => {});
    const goaway = new Promise<{ code: number; last: number }>((resolve) => session.once("goaway", (code, last) => resolve({ code, last })));
    const closed = new Promise<void>((resolve) => session.once("close", () => resolve()));
    for (let i = 0; i < 2; i++) {
      await new Promise<void>((resolve, reject) => {
        const stream = session.request({ ":path": "/health" });
        stream.on("error", reject);
        stream.resume();
        stream.on("end", () => resolve());
      });
    }
    const other = new RawClient(daemon.port);
    await other.exchange("/health");
    await untilSeries(metricsPort, "readiness_proxy_client_connections", 2);
    const newcomer = new RawClient(daemon.port);
    await newcomer.exchange("/health");
    t.same(await goaway, { code: http2.constants.NGHTTP2_NO_ERROR, last: 3 }, "its two streams (1 and 3) were processed");
    await closed;
    t.equal(other.socket.destroyed, false, "the HTTP/1.1 connection idle since later stays");
    await untilSeries(metricsPort, "readiness_proxy_client_connections_shed_total", 1);
    other.socket.destroy();
    newcomer.socket.destroy();
  });

  // The HTTP/1.1 reader's listeners come off the socket when it turns out to be h2 (prior
  // knowledge): the limit's own close listener, put on at admission, used to go with them, so
  // every h2c connection that closed stayed counted until new ones were refused.
  t.test("an h2 connection that closes is no longer counted", async (t) => {
    const app = await holdingApp(t);
    const { daemon, metricsPort } = await start(t, 2, app.url);
    for (let i = 0; i < 2; i++) {
      const session = http2.connect(`http://127.0.0.1:${daemon.port}`);
      session.on("error", () => {});
      await new Promise<void>((resolve, reject) => {
        const stream = session.request({ ":path": "/health" });
        stream.on("error", reject);
        stream.resume();
        stream.on("end", () => resolve());
      });
      await new Promise<void>((resolve) => session.close(() => resolve()));
    }
    await untilSeries(metricsPort, "readiness_proxy_client_connections", 0);
    const later = new RawClient(daemon.port);
    await later.exchange("/health");
    t.equal(seriesValue(await scrapeText(metricsPort), "readiness_proxy_client_connections_shed_total"), 0, "nothing was shed to admit it");
    later.socket.destroy();
  });

  t.test("with every connection busy a new one waits unread, and is served once one ends", async (t) => {
    const app = await holdingApp(t);
    const { daemon, metricsPort } = await start(t, 2, app.url);
    const first = new RawClient(daemon.port);
    first.send("/hold");
    const firstResponse = await app.arrived();
    const second = new RawClient(daemon.port);
    second.send("/hold");
    const secondResponse = await app.arrived();

    const waiting = new RawClient(daemon.port);
    waiting.send("/health");
    await daemon.waitForLog("connection limit reached");
    t.equal(waiting.text, "", "not answered while both are busy (and no 5xx)");
    t.equal(seriesValue(await scrapeText(metricsPort), "readiness_proxy_client_connections"), 2);
    t.equal(seriesValue(await scrapeText(metricsPort), "readiness_proxy_client_connections_shed_total"), 0, "a busy connection is never shed");

    // The first answer ends: that connection is idle, so it is closed for the one waiting.
    firstResponse.end("first");
    await first.until("first");
    await first.closed;
    await waiting.until("HTTP/1.1 200");
    t.match(waiting.text, /^HTTP\/1\.1 200 /);
    secondResponse.end("second");
    await second.until("second");
    t.equal(second.socket.destroyed, false);
    second.socket.destroy();
    waiting.socket.destroy();
  });
});
