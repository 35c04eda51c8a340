// Wires a validated Config into a daemon ready to start: checks, pages, proxy, server, shutdown, and the app and metrics when asked. Used by main.ts and the HTTP tests.
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { AppProcess } from "./app/app-process.js";
import type { Config } from "./config/config.js";
import { describeConfig } from "./cli.js";
import { formatListenAddress } from "./config/listen-address.js";
import { loadErrorPages } from "./http/error-pages.js";
import { ErrorResponder } from "./http/error-response.js";
import type { DrainState } from "./http/drain-state.js";
import { HealthEndpoints } from "./http/health.js";
import { AppHealth } from "./http/app-health.js";
import { ProxyErrorLog } from "./relay/proxy-error-log.js";
import { StreamGarbage } from "./relay/stream-garbage.js";
import { NO_PROXY_OBSERVER, type ProxyObserver } from "./relay/proxy-observer.js";
import { createAccessLog } from "./access-log/access-log.js";
import { ConcurrencyLimiter } from "./overload/concurrency-limiter.js";
import { NO_OVERLOAD_OBSERVER, type OverloadObserver } from "./overload/overload-observer.js";
import { RelayServer, type Listener } from "./relay/relay-server.js";
import { ConnectionLimit, type ClientConnectionCounts } from "./relay/connection-limit.js";
import { healthRoute } from "./grpc-health/h2-health-route.js";
import { GrpcHealthService } from "./grpc-health/health-service.js";
import { UpstreamPool } from "./relay/http1/upstream-pool.js";
import { H2cPool } from "./relay/http2/h2c-pool.js";
import { StreamDeadlines } from "./relay/stream-deadlines.js";
import type { LocalH2Service } from "./relay/routing.js";
import { givenListenerNames } from "./config/listener-specs.js";
import { socketPathOf } from "./config/upstream-url.js";
import { ListenerScanner, type TableReader } from "./procfs/listener-scan.js";
import { checkNames } from "./readiness/check-results.js";
import { ReadinessCheck, type ReadinessObserver } from "./readiness/readiness-check.js";
import { grpcCheck, httpCheck, upstreamCheck, type ProbedCheck } from "./readiness/probed-check.js";
import { requiredListenerPorts, upstreamListener, upstreamUnixListener } from "./readiness/upstream-listener.js";
import { platformName, VERSION } from "./version.js";
import { GracefulShutdown } from "./shutdown.js";
import { MaintenanceMode } from "./admin/maintenance.js";
import { describeStatus } from "./admin/status.js";
import { holdAppStart } from "./app/start-gate.js";
import { InFlightRequests } from "./relay/in-flight.js";
import { WaitForDrain } from "./http/wait-for-drain.js";
import { MAINTENANCE_CHECK } from "./readiness/check-results.js";
import type { RelayContext } from "./relay/relay-context.js";
import { evaluate } from "./http/readyz-answers.js";
import { warmUpRelay, type WarmUpOutcome } from "./relay-warmup.js";
import { SYSTEM_TIMERS, type Timers } from "./timers.js";

export interface Daemon {
  readonly server: RelayServer;
  /** The app of the entrypoint form; undefined in the sidecar form. */
  readonly app: AppProcess | undefined;
  readonly readiness: ReadinessCheck;
  readonly shutdown: GracefulShutdown;
  /** The admin listener's maintenance mode; undefined without --admin-listen. */
  readonly maintenance: MaintenanceMode | undefined;
  /** Proxied requests in flight. */
  readonly inFlight: InFlightRequests;
  /** --idle-timeout and --max-request-duration's sweep, on the daemon's clock; undefined with both off. Tests sweep it by hand. */
  readonly deadlines: StreamDeadlines | undefined;
  /** True while --app-start-wait holds the app's start: a signal then exits at once (CONTRACT §14). */
  readonly holdingApp: boolean;
  /**
   * Opens the listener (then the metrics and admin listeners, if any), logs `listening`, runs the
   * first check, then starts the app (entrypoint form) so that no request of the app's can arrive
   * before we serve, once the start gate lets it (--app-start-wait); resolves with the address
   * bound (port 0 resolved). Rejects with a listen error (exit 1, the app never started), an app
   * start error (exit 127 or 126) or a fatal start wait (exit 1).
   */
  start(): Promise<AddressInfo>;
  /** The start's warm-up of the relay (src/relay-warmup.ts), once start() has listened. */
  readonly warmUp: Promise<WarmUpOutcome> | undefined;
}

/** Metrics as the daemon sees them: two observers and a listener (src/metrics/ implements it). */
export interface DaemonMetrics {
  readonly proxy: ProxyObserver;
  readonly readiness: ReadinessObserver;
  /** Present when the factory was told overload protection is on. */
  readonly overload?: OverloadObserver | undefined;
  start(): Promise<unknown>;
  close(): Promise<void>;
}

/** Builds the metrics once the daemon knows its drain flag and check names. */
export type MetricsFactory = (parts: {
  readonly drain: DrainState;
  readonly checkNames: readonly string[];
  readonly overloadProtection: boolean;
  readonly connections: ClientConnectionCounts;
}) => DaemonMetrics;

export interface DaemonOptions {
  readonly log: Logger;
  /** Where access lines go (main.ts: an asynchronous stdout destination); `log` when not given. */
  readonly accessLog?: Logger;
  /** Injected in tests to count or fail socket table reads. */
  readonly readTable?: TableReader;
  /** Given only with --metrics-listen. */
  readonly metrics?: MetricsFactory;
  /** main.ts: resolves once our lifecycle lines so far are on stdout, within a short bound; the app's stop signal waits for it (src/app/app-process.ts). */
  readonly logWritten?: () => Promise<void>;
  /** Services answered on h2 before anything is forwarded (src/grpc/'s grpc.health.v1); none by default. */
  readonly localH2Services?: readonly LocalH2Service[];
  /**
   * The daemon's clock and timers (src/timers.ts), the runtime's by default: the readiness cache,
   * the warm-up, the stream deadlines, the listener's sweep (head and keep-alive timeouts),
   * connection ages and their grace, the upstream pools, the queue's timeout, the gRPC probe's
   * timeout, the shutdown and /wait-for-drain's waits run on them. Tests move them by hand (test/helpers/test-doubles.ts's
   * ManualTimers), so no test waits for a timeout.
   */
  readonly timers?: Timers;
  /**
   * The whole shutdown as a signal starts it (main.ts's, which then exits), for the admin
   * listener's `POST /quitquitquit` (CONTRACT §17); without it, the shutdown runs and nothing exits.
   */
  readonly requestStop?: (reason: string) => void;
  /** main.ts: warm the relay while not ready (src/relay-warmup.ts); in-process tests leave it off, their readiness runs counted as they set them. */
  readonly warmUpBeforeReady?: boolean;
}

/**
 * How long a connection to the app may stay idle in either pool (not --idle-timeout, which ends a
 * quiet exchange): below the usual upstream idle timeouts (Node 5 s, uvicorn 5 s), so we close
 * idle sockets first.
 */
const IDLE_APP_CONNECTION_MS = 4_000;

/**
 * Builds the daemon without opening the listener, so the caller can install signal handlers
 * first (a SIGTERM right after `listening` must find them). Throws a usage error (exit 2) for
 * an unreadable --error-pages-dir.
 */
export function createDaemon(config: Config, { log, accessLog = log, readTable, metrics: createMetrics, localH2Services = [], timers = SYSTEM_TIMERS, requestStop, logWritten, warmUpBeforeReady = false }: DaemonOptions): Daemon {
  // The operator's switch (CONTRACT §14), only with the admin listener; a change is told to gRPC watchers at once.
  const maintenance = config.adminListen ? new MaintenanceMode({ log, onChange: () => grpcHealth.drainBegan() }) : undefined;
  // Set by the shutdown, read by /readyz, the server and the metrics; its start tells the gRPC watchers.
  const drain = drainFlag(() => grpcHealth.drainBegan(), maintenance);
  // The operator's ports, and in the entrypoint form the app's own (CONTRACT §8): one scan for all.
  const listenerOptions = { requiredPorts: config.requiredPorts, upstream: config.upstream, mode: config.upstreamListener, entrypointForm: config.appCommand.length > 0 };
  const requiredPorts = requiredListenerPorts(listenerOptions);
  // UDP and unix listeners join the same scan, each kind from its own tables; a table no listener needs is not read.
  // Behind --upstream unix: in the entrypoint form, the app's own socket (as a TCP upstream's own port).
  const appSocket = upstreamUnixListener(listenerOptions);
  const operatorOthers = config.requiredListeners.filter((listener) => listener.kind !== "tcp");
  const otherListeners = appSocket && !operatorOthers.some((listener) => listener.key === appSocket.key) ? [...operatorOthers, appSocket] : operatorOthers;
  const listenerNames = givenListenerNames(config.requiredListeners);
  const listenerKeys = [...requiredPorts, ...otherListeners.map((listener) => listener.key)];
  const scanKinds = [...new Set([...(requiredPorts.length > 0 ? ["tcp" as const] : []), ...otherListeners.map((listener) => listener.kind)])];
  const probed = probedChecks(config, timers);
  // --max-connections (CONTRACT §18): made before the metrics, which read its counts.
  const connectionLimit = new ConnectionLimit(config.maxConnections, log);
  const metrics = createMetrics?.({
    connections: connectionLimit,
    drain,
    checkNames: [...(maintenance ? [MAINTENANCE_CHECK] : []), ...checkNames(listenerKeys, probed.map((check) => check.name), listenerNames)],
    overloadProtection: config.maxConcurrency > 0,
  });
  const observer = metrics?.proxy ?? NO_PROXY_OBSERVER;
  const errors = new ErrorResponder(loadErrorPages(config.errorPagesDir));
  const readiness = new ReadinessCheck({
    requiredPorts,
    otherListeners,
    listenerNames,
    scanner: new ListenerScanner({ procRoot: config.procRoot, readTable, kinds: scanKinds, unixPaths: otherListeners.flatMap((listener) => (listener.kind === "unix" ? [listener.path] : [])) }),
    log,
    ttlMs: config.cacheTtlMs,
    clock: timers,
    probed,
    warnAfterMs: config.warnAfterMs,
    thresholds: { failure: config.failureThreshold, success: config.successThreshold },
    observer: metrics?.readiness,
    // Its own port counts only where the proxy connects: an app on [::1] behind a 127.0.0.1 upstream is not ready.
    upstreamListener: upstreamListener(listenerOptions),
    drain,
    maintenanceCheck: maintenance !== undefined,
  });
  const grpcHealth = new GrpcHealthService({ readiness, drain, ttlMs: config.cacheTtlMs });
  const errorLog = new ProxyErrorLog(log);
  // A defect of ours contained to one request or connection: the process keeps serving everyone else.
  const reportFault = (error: unknown) => {
    observer.internalError();
    errorLog.error("internal error", { err: error });
  };
  const pool = new UpstreamPool({
    address: config.upstream,
    idleTimeoutMs: IDLE_APP_CONNECTION_MS,
    // The app's fault, not a client's: its connection is closed and nobody gets the bytes.
    onUnaskedBytes: () => log.debug("upstream sent bytes no request asked for; connection closed"),
    onFault: reportFault,
    timers,
  });
  // Made now, connected at its first stream only (our own codec's client side).
  // An app that accepts and never sends SETTINGS: its requests time out at their own head deadline
  // (which counts the connection's setup); the connection itself goes after 10 s at most.
  const { upstream } = config;
  // One for the process: bodies streamed (HTTP/1.1) and h2 socket reads are counted together.
  const garbage = new StreamGarbage();
  const h2cPool = new H2cPool({
    ...(upstream.kind === "unix" ? { host: "localhost", port: 80, path: upstream.path } : { host: upstream.host, port: upstream.port }),
    idleTimeoutMs: IDLE_APP_CONNECTION_MS,
    settingsTimeoutMs: Math.min(config.responseHeaderTimeoutMs, 10_000),
    reportFault,
    garbage,
    timers,
  });
  const limiter =
    config.maxConcurrency > 0
      ? new ConcurrencyLimiter({
          limit: config.maxConcurrency,
          maxQueue: config.maxQueue,
          queueTimeoutMs: config.queueTimeoutMs,
          observer: metrics?.overload ?? NO_OVERLOAD_OBSERVER,
          timers,
        })
      : undefined;
  const inFlight = new InFlightRequests();
  // The shutdown is made after the server it drives; the answer reads it only when asked.
  const waitForDrain = new WaitForDrain({
    progress: {
      get began(): Promise<void> {
        return shutdown.began;
      },
      delayPassed: (): Promise<void> => shutdown.delayPassed(),
    },
    inFlight,
    timeoutMs: config.shutdownTimeoutMs,
    timers,
  });
  const deadlines =
    config.exchangeIdleTimeoutMs > 0 || config.maxRequestDurationMs > 0
      ? new StreamDeadlines({ idleMs: config.exchangeIdleTimeoutMs, maxDurationMs: config.maxRequestDurationMs, reportFault, timers })
      : undefined;
  const health = new HealthEndpoints(readiness, drain, errors, waitForDrain, appHealth(config));
  const context: RelayContext = {
    pathPrefix: config.upstream.pathPrefix,
    upstreamHost: config.upstream.authority,
    responseHeaderTimeoutMs: config.responseHeaderTimeoutMs,
    errors,
    log,
    errorLog,
    interceptUpstreamErrors: config.interceptUpstreamErrors,
    observer,
    garbage,
    limiter,
    accessLog: createAccessLog(accessLog, config.accessLog),
    deadlines,
    connectionAge: config.maxConnectionAgeMs > 0 ? { maxAgeMs: config.maxConnectionAgeMs, graceMs: config.maxConnectionAgeGraceMs } : undefined,
    reportFault,
    inFlight,
    connectRetryMs: config.upstreamConnectRetryMs,
    timers,
  };
  const server = new RelayServer({
    health,
    drain,
    upstreamPool: pool,
    connectionLimit,
    // Services a caller adds (tests) are asked before the gRPC health service, which claims only POST /grpc.health.v1.Health/{Check,Watch}.
    http2: { upstreamProtocol: config.upstreamProtocol, h2cPool: () => h2cPool, localServices: [...localH2Services, healthRoute(grpcHealth)] },
    context,
    // The runtime's count; named, so these parts have the keys the warm-up's relay's have (one hidden class for both).
    listeningSockets: undefined,
  });
  const app = config.appCommand.length > 0 ? new AppProcess({ command: config.appCommand, log, stopTimeoutMs: config.appStopTimeoutMs, logWritten }) : undefined;
  let admin: { close(): Promise<void> } | undefined;
  let holdingApp = false;
  let warmUp: Promise<WarmUpOutcome> | undefined;
  const shutdown = new GracefulShutdown({
    drain,
    server: endingWatches(server, grpcHealth),
    log,
    delayMs: config.shutdownDelayMs,
    timeoutMs: config.shutdownTimeoutMs,
    timers,
    // Still queued when the time is up: the limiter's 503, not a reset (CONTRACT §10).
    onTimeout: () => limiter?.rejectQueued(),
    closeUpstream: async () => {
      pool.close();
      h2cPool.close();
      await readiness.close();
    },
    afterDrain: async (reason) => {
      // --app-stop-signal, else the signal we got (SIGINT stays SIGINT); after its own exit there is none to send.
      await app?.stop(config.appStopSignal ?? (reason === "SIGINT" ? "SIGINT" : "SIGTERM"));
      // An app that ended on its own (a Job's): the pod's other sidecars are told, so the pod can complete (CONTRACT §17).
      if (app?.exit && !app.stoppedByUs && config.appExitNotify.length > 0) {
        const { notifyAppExit } = await import("./app/exit-notify.js");
        await notifyAppExit(config.appExitNotify, log);
      }
      // Last: a scrape or a status during the drain still sees it.
      maintenance?.close();
      await Promise.all([metrics?.close(), admin?.close()]);
    },
  });
  const start = async () => {
    const address = await server.sockets.listen(config.listen);
    await metrics?.start();
    if (config.adminListen && maintenance) {
      // node:http is loaded only now, for the admin listener: a start without it pays nothing.
      const { AdminServer } = await import("./admin/admin-server.js");
      const adminServer = new AdminServer(config.adminListen, {
        drain: () => shutdown.beginDrain("POST /drain"),
        stop: () => (requestStop ?? ((reason: string) => void shutdown.run(reason)))("POST /quitquitquit"),
        // Both loggers: the access log's lines follow the level like every other (CONTRACT §17).
        setLogLevel: (level) => {
          log.level = level;
          accessLog.level = level;
          log.info({ level }, "log level set");
        },
        maintenance,
        status: async () => describeStatus(await readiness.check(), drain, maintenance.until, inFlight.count),
      });
      await adminServer.start();
      admin = adminServer;
    }
    log.info(
      {
        listen: formatListenAddress({ host: config.listen.host, port: address.port }),
        upstream: config.upstream.url,
        requiredListeners: listenerKeys,
        upstreamHealthPath: config.upstreamHealthPath,
        upstreamGrpcService: config.upstreamGrpcService,
        ...(probed.length > 0 && { probedChecks: probed.map((check) => check.name) }),
        procRoot: config.procRoot,
        ...describeConfig(config),
        // Which build answers: a mixed x64/arm64 fleet is told apart from one log line.
        version: VERSION,
        runtime: process.version,
        arch: platformName(),
      },
      "listening",
    );
    // Only shutdown (and maintenance): /readyz cannot tell anything about the app. Said once, so the operator knows.
    if (readiness.names.length === (maintenance ? 2 : 1)) log.warn("no readiness checks configured; /readyz always reports ready");
    // The first check runs now, so the starting state is logged and the first probe is cached.
    const firstCheck = readiness.check();
    // While not ready (the app starting, or not listening yet), the relay warms its hot paths on a private copy; it stops once ready, so readiness is never later.
    // It only watches the answers: a check it started would be shared by the next /readyz, begun before the app listened (with a 0 s TTL, an answer older than the request).
    if (warmUpBeforeReady) warmUp = warmUpRelay({ context, health, drain, upstreamProtocol: config.upstreamProtocol, log, clock: timers, ready: async () => drain.draining || evaluate(readiness.latest() ?? (await firstCheck), drain).ready });
    if (app && config.appStartWaitMs > 0) await holdTheApp();
    await app?.start();
    return address;
  };
  /** --app-start-wait: the app starts once the operator's ports listen; when the wait runs out, anyway (warn) or never (fatal, exit 1). */
  const holdTheApp = async () => {
    holdingApp = true;
    try {
      await holdAppStart({ ports: config.requiredPorts, check: () => readiness.check(), ttlMs: config.cacheTtlMs, waitMs: config.appStartWaitMs, fatal: config.appStartWaitFatal, log });
    } finally {
      holdingApp = false;
    }
  };
  return {
    server,
    app,
    readiness,
    shutdown,
    maintenance,
    inFlight,
    deadlines,
    get holdingApp() {
      return holdingApp;
    },
    get warmUp() {
      return warmUp;
    },
    start,
  };
}

/**
 * The checks answered by an endpoint, in check order: the named HTTP checks, the named gRPC
 * checks (each in the order given), then the app's own (`upstream`): the mesh agent's
 * readiness is a condition for traffic like a listener, the app's own health is nearest to it.
 */
function probedChecks(config: Config, timers: Timers): ProbedCheck[] {
  const timeoutMs = config.upstreamHealthTimeoutMs;
  const upstream = upstreamCheck({ upstream: config.upstream, path: config.upstreamHealthPath, service: config.upstreamGrpcService, timeoutMs, timers });
  return [
    ...config.requiredHttpChecks.map((spec) => httpCheck(spec, timeoutMs)),
    ...config.requiredGrpcChecks.map((spec) => grpcCheck(spec, timeoutMs, timers)),
    ...(upstream ? [upstream] : []),
  ];
}

/** `/app-health` (CONTRACT §17): at --app-health-path, else the upstream check's path; off when neither is given. */
function appHealth(config: Config): AppHealth | undefined {
  const path = config.appHealthPath ?? config.upstreamHealthPath;
  return path === undefined ? undefined : new AppHealth({ origin: config.upstream.origin, path, timeoutMs: config.upstreamHealthTimeoutMs, socketPath: socketPathOf(config.upstream) });
}

/**
 * The drain flag; `onBegin` runs once, when it is first set (gRPC Watch streams hear NOT_SERVING
 * at once). With the admin listener it also reads maintenance mode, live.
 */
function drainFlag(onBegin: () => void, maintenance: MaintenanceMode | undefined): { draining: boolean; readonly maintenance: boolean | undefined } {
  let draining = false;
  return {
    get maintenance() {
      return maintenance?.on;
    },
    get draining() {
      return draining;
    },
    set draining(value: boolean) {
      const begins = value && !draining;
      draining = value;
      if (begins) onBegin();
    },
  };
}

/** The listener as the shutdown drives it: when it closes, every gRPC Watch ends, so none holds the drain open. */
function endingWatches(server: RelayServer, grpcHealth: GrpcHealthService): Listener {
  return {
    close: (done) => {
      grpcHealth.close();
      server.close(done);
    },
    closeIdleConnections: () => server.closeIdleConnections(),
    closeAllConnections: () => server.closeAllConnections(),
    goAway: () => server.goAway(),
  };
}
