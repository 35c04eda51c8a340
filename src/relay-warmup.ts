// Warms the relay's hot paths before the first client: HTTP/1.1 and h2c/gRPC exchanges through a private copy of the relay, against in-process peers on loopback, while readiness still fails.
import { createServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import { NO_ACCESS_LOG } from "./access-log/access-log.js";
import type { HealthEndpoints } from "./http/health.js";
import { InFlightRequests } from "./relay/in-flight.js";
import { NO_PROXY_OBSERVER } from "./relay/proxy-observer.js";
import { StreamResponder } from "./grpc-health/h2-health-route.js";
import { framedHealthCheckResponse, SERVING_STATUS } from "./grpc/health-messages.js";
import { SYSTEM_TIMERS, type Clock } from "./timers.js";
import { GrpcHealthProbe } from "./readiness/grpc-health-probe.js";
import type { HealthProbe } from "./readiness/health-probe.js";
import { ConnectionLimit } from "./relay/connection-limit.js";
import { UpstreamPool } from "./relay/http1/upstream-pool.js";
import { H2cPool } from "./relay/http2/h2c-pool.js";
import type { LocalH2Service, UpstreamProtocol } from "./relay/routing.js";
import type { RelayContext } from "./relay/relay-context.js";
import { RelayServer } from "./relay/relay-server.js";
import { WarmUpHttp1Client } from "./relay-warmup-client.js";
import { listen } from "./http/listen.js";
import { withEagerTurbofan } from "./warm-up-tiering.js";
import { parseUpstream, type Upstream } from "./config/upstream-url.js";
import type { DrainState } from "./http/drain-state.js";

export interface WarmUpOptions {
  /** The daemon's relay context: the warm-up's copy keeps its rules, without the access log, metrics, limiter or in-flight count. */
  readonly context: RelayContext;
  /** Only asked which paths are its own; the warm-up's paths are none of them. */
  readonly health: HealthEndpoints;
  /** The daemon's own drain flag: the warm-up stops before a drain could show, and its relay reads the object the clients' relay reads. */
  readonly drain: DrainState;
  readonly upstreamProtocol: UpstreamProtocol;
  readonly log: Logger;
  /** Resolves true once a readiness answer (asked by a prober, never by the warm-up) said ready: the warm-up then stops, so it never delays readiness. */
  readonly ready: () => Promise<boolean>;
  /** Exchanges of each protocol (V8's TurboFan optimises a function after about 3,000 calls: a function called once an exchange needs that many, one called once a connection more). */
  readonly exchanges?: number;
  /** At most this long, whatever is left. */
  readonly maxMs?: number;
  /** What measures maxMs: the daemon's clock (tests move it on rather than wait the 5 s out). */
  readonly clock?: Clock;
}

export interface WarmUpOutcome {
  readonly http1: number;
  readonly grpc: number;
  readonly stoppedBy: "done" | "ready" | "time" | "error";
  readonly ms: number;
}

/** Clients at once per protocol: several connections, so the pools' and listener's multi-connection paths are taken too. */
const CLIENTS = 4;
/**
 * HTTP/1.1 clients at once: more in flight, more exchanges per wake-up, so more fit in the time
 * before the app listens (with 4 and an HTTP client library, about 1,400 a second: TurboFan's
 * thresholds were not reached before a 1.5-s app was ready, and its compiles ran under client traffic).
 */
const HTTP1_CLIENTS = 8;
/** A client's connection is replaced after this many requests: accepting and closing connections warms too. */
const REQUESTS_PER_CONNECTION = 100;
const DEFAULT_EXCHANGES = 10_000;
const DEFAULT_MAX_MS = 5_000;
/** Readiness (the last answer) is looked at between rounds of this many exchanges per client. */
const ROUND = 25;
/**
 * A typical app's answer (a web server's usual fields, keep-alive's hint among them): fields the
 * warm-up never showed the relay would leave its code without feedback, to be deoptimised at the first client.
 */
const HTTP1_ANSWER = Buffer.from(
  "HTTP/1.1 200 OK\r\nServer: warm-up\r\nDate: Mon, 07 Dec 2026 00:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nLast-Modified: Mon, 07 Dec 2026 00:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nETag: \"0-4\"\r\nAccept-Ranges: bytes\r\n\r\nwarm",
  "latin1",
);

/**
 * Runs the warm-up to its end; never throws (a failure is logged at debug: the proxy serves as it
 * would have without it). Everything it opens listens on 127.0.0.1 port 0 and is closed before it resolves.
 */
export async function warmUpRelay(options: WarmUpOptions): Promise<WarmUpOutcome> {
  const clock = options.clock ?? SYSTEM_TIMERS;
  const started = clock.now();
  const exchanges = options.exchanges ?? DEFAULT_EXCHANGES;
  const deadline = started + (options.maxMs ?? DEFAULT_MAX_MS);
  // Asked before anything is opened: an app that listens at once pays for no part of the warm-up.
  if (await options.ready().catch(() => true)) {
    const outcome = { http1: 0, grpc: 0, stoppedBy: "ready" as const, ms: Math.round(clock.now() - started) };
    options.log.debug(outcome, "warm-up done");
    return outcome;
  }
  const parts = await WarmUpParts.open(options).catch((error: unknown) => {
    options.log.debug({ err: error }, "warm-up not run");
    return undefined;
  });
  if (parts === undefined) {
    const outcome = { http1: 0, grpc: 0, stoppedBy: "error" as const, ms: Math.round(clock.now() - started) };
    options.log.debug(outcome, "warm-up done");
    return outcome;
  }
  const counts = { http1: 0, grpc: 0 };
  const stoppedBy = await withEagerTurbofan(() => exchangeUntilStopped(parts, counts, { ...options, exchanges, deadline, clock }));
  const outcome = { ...counts, stoppedBy, ms: Math.round(clock.now() - started) };
  options.log.debug(outcome, "warm-up done");
  return outcome;
}

/** Rounds of both protocols' exchanges until each has its count, readiness passes, the time is up or one fails; closes the parts. */
async function exchangeUntilStopped(
  parts: WarmUpParts,
  counts: { http1: number; grpc: number },
  options: Pick<WarmUpOptions, "ready" | "log"> & { exchanges: number; deadline: number; clock: Clock },
): Promise<WarmUpOutcome["stoppedBy"]> {
  const { exchanges, deadline, clock } = options;
  let stoppedBy: WarmUpOutcome["stoppedBy"] = "done";
  try {
    while (counts.http1 < exchanges || counts.grpc < exchanges) {
      if (await options.ready()) {
        stoppedBy = "ready";
        break;
      }
      if (clock.now() >= deadline) {
        stoppedBy = "time";
        break;
      }
      // Both protocols at once, as client traffic comes; each stops at its count.
      await Promise.all([
        ...(counts.http1 < exchanges ? parts.http1.map((probe) => repeat(probe, counts, "http1")) : []),
        ...(counts.grpc < exchanges ? parts.grpc.map((probe) => repeat(probe, counts, "grpc")) : []),
      ]);
    }
  } catch (error) {
    stoppedBy = "error";
    options.log.debug({ err: error }, "warm-up stopped");
  } finally {
    await parts.close();
  }
  return stoppedBy;
}

async function repeat(probe: HealthProbe, counts: { http1: number; grpc: number }, kind: "http1" | "grpc"): Promise<void> {
  for (let i = 0; i < ROUND; i++) {
    const outcome = await probe.probe();
    if (!outcome.ok) throw new Error(`warm-up ${kind} exchange failed: ${outcome.reason}`);
    counts[kind]++;
  }
}

/** The warm-up's relay, its two peers and its clients. */
class WarmUpParts {
  readonly http1: HealthProbe[];
  readonly grpc: GrpcHealthProbe[];
  readonly #closers: (() => Promise<void>)[];

  private constructor(http1: HealthProbe[], grpc: GrpcHealthProbe[], closers: (() => Promise<void>)[]) {
    this.http1 = http1;
    this.grpc = grpc;
    this.#closers = closers;
  }

  static async open(options: WarmUpOptions): Promise<WarmUpParts> {
    const closers: (() => Promise<void>)[] = [];
    try {
      const context = privateContext(options.context, options.log);
      // The HTTP/1.1 app: a fixed answer to every request head.
      const app = createServer({ noDelay: true }, answerEveryHead);
      const appPort = await listenLoopback(app);
      closers.push(() => closeServer(app));
      // The h2c app: a relay of our own whose only service answers every gRPC call SERVING (our codec's server side).
      const grpcApp = relayFor(context, options, appPort, appPort, [servingEveryCall()], "auto");
      closers.push(grpcApp.close);
      const grpcPort = (await grpcApp.relay.sockets.listen({ host: "127.0.0.1", port: 0 })).port;
      // The relay warmed: HTTP/1.1 to the first app, h2 to the second, as the daemon's protocol choice says.
      const relay = relayFor(context, options, appPort, grpcPort, [], options.upstreamProtocol);
      closers.push(relay.close);
      const relayPort = (await relay.relay.sockets.listen({ host: "127.0.0.1", port: 0 })).port;
      const http1 = Array.from({ length: HTTP1_CLIENTS }, () => new WarmUpHttp1Client({ port: relayPort, requestsPerConnection: REQUESTS_PER_CONNECTION, timeoutMs: 2_000 }));
      const grpc = Array.from({ length: CLIENTS }, () => new GrpcHealthProbe({ endpoint: { kind: "tcp", host: "127.0.0.1", port: relayPort, authority: `127.0.0.1:${relayPort}` }, service: "warm-up", timeoutMs: 2_000 }));
      closers.push(async () => {
        await Promise.all([...http1, ...grpc].map((probe) => probe.close()));
      });
      return new WarmUpParts(http1, grpc, closers);
    } catch (error) {
      for (const close of closers.reverse()) await close().catch(() => {});
      throw error;
    }
  }

  /** Clients first, then the relays, then the app: nothing stays open. */
  async close(): Promise<void> {
    for (const close of this.#closers.reverse()) await close().catch(() => {});
  }
}

/**
 * The daemon's rules without anything a client, the access log or the metrics could see. The rest
 * (the stream deadlines, the garbage count, the clock, the drain flag, the app's address as
 * --upstream's parser makes it) is the daemon's own or of its shape: V8 compiles the relay's code
 * for the hidden classes it meets while warming, and an object of another shape at the first
 * client throws that code away ("wrong map") and compiles it again under the client's traffic.
 */
function privateContext(context: RelayContext, log: Logger): RelayContext {
  return {
    ...context,
    accessLog: NO_ACCESS_LOG,
    observer: NO_PROXY_OBSERVER,
    limiter: undefined,
    inFlight: new InFlightRequests(),
    reportFault: (error: unknown) => log.debug({ err: error }, "warm-up fault"),
  };
}

/** A relay as the daemon makes one, its HTTP/1.1 app at `http1Port` and its h2c app at `h2Port`; `close` ends its connections, pools and sockets. */
function relayFor(
  context: RelayContext,
  options: WarmUpOptions,
  http1Port: number,
  h2Port: number,
  localServices: LocalH2Service[],
  upstreamProtocol: UpstreamProtocol,
): { relay: RelayServer; close: () => Promise<void> } {
  const pool = new UpstreamPool({ address: loopbackUpstream(http1Port), idleTimeoutMs: 4_000, onUnaskedBytes: () => {}, onFault: context.reportFault, timers: context.timers });
  const h2cPool = new H2cPool({ host: "127.0.0.1", port: h2Port, idleTimeoutMs: 4_000, settingsTimeoutMs: 2_000, reportFault: context.reportFault, garbage: context.garbage, timers: context.timers });
  const relay = new RelayServer({
    health: options.health,
    drain: options.drain,
    upstreamPool: pool,
    connectionLimit: new ConnectionLimit(0, options.log),
    http2: { upstreamProtocol, h2cPool: () => h2cPool, localServices },
    context,
    // Its clients are the warm-up's own few: no storm to spread, so one listen, not sixteen, beside a start's first probes.
    listeningSockets: 1,
  });
  const close = async () => {
    relay.closeAllConnections();
    pool.close();
    h2cPool.close();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
  };
  return { relay, close };
}

function servingEveryCall(): LocalH2Service {
  const answer = framedHealthCheckResponse(SERVING_STATUS.SERVING);
  return {
    bodyLimit: 1024,
    claims: () => true,
    answer: (_request, _body, stream) => {
      const responder = new StreamResponder(stream);
      responder.sendHeaders();
      responder.sendMessage(answer);
      responder.sendTrailers(0);
      return true;
    },
  };
}

/** Answers each request head (GETs without a body) as it completes; a head split across reads is joined by counting its end. */
function answerEveryHead(socket: Socket): void {
  let tail = "";
  socket.on("error", () => {});
  socket.on("data", (chunk: Buffer) => {
    const text = tail + chunk.toString("latin1");
    let at = text.indexOf("\r\n\r\n");
    let from = 0;
    while (at >= 0) {
      socket.write(HTTP1_ANSWER);
      from = at + 4;
      at = text.indexOf("\r\n\r\n", from);
    }
    tail = text.slice(Math.max(from, text.length - 3));
  });
}

/** As every one-socket listener is (http/listen.ts): no name lookup for 127.0.0.1, so no IPv6 regular expression compiled beside a start's first probes. */
async function listenLoopback(server: Server): Promise<number> {
  return (await listen(server, { host: "127.0.0.1", port: 0 }, " (the warm-up's app)")).port;
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** `http://127.0.0.1:<port>` parsed as --upstream is. */
function loopbackUpstream(port: number): Upstream {
  const upstream = parseUpstream(`http://127.0.0.1:${port}`);
  if (typeof upstream === "string") throw new Error(`warm-up upstream refused: ${upstream}`);
  return upstream;
}
