// The validated configuration every part of the daemon reads: what the command line (src/cli.ts, from src/config/option-table.ts) produces.
import type { Level } from "pino";
import type { ListenAddress } from "./listen-address.js";
import type { RequiredListener } from "./listener-specs.js";
import type { GrpcCheckSpec, HttpCheckSpec } from "./named-check-specs.js";
import type { Upstream } from "./upstream-url.js";

/** Everything the daemon needs, validated. Each field but `appCommand` has one row in src/config/option-table.ts. */
/** `--readiness-upstream-listener`: `auto` requires the upstream's port in the entrypoint form; `off` never. */
export type UpstreamListenerMode = "auto" | "off";

export const UPSTREAM_LISTENER_MODES: readonly UpstreamListenerMode[] = ["auto", "off"];

export interface Config {
  readonly listen: ListenAddress;
  readonly upstream: Upstream;
  /** Every `--readiness-required-listener`, in check order (TCP ports ascending, UDP ports ascending, unix as given), at most 16. */
  readonly requiredListeners: readonly RequiredListener[];
  /** The TCP ones' ports, ascending: derived from `requiredListeners` (no row of its own). */
  readonly requiredPorts: readonly number[];
  /** Entrypoint form: also require the upstream's own port when it is on loopback (`auto`), or not (`off`). */
  readonly upstreamListener: UpstreamListenerMode;
  readonly cacheTtlMs: number;
  /** Failed evaluations in a row before a passing check fails (1: at once). */
  readonly failureThreshold: number;
  /** Passing evaluations in a row before a failing check passes again (1: at once). */
  readonly successThreshold: number;
  readonly procRoot: string;
  readonly responseHeaderTimeoutMs: number;
  readonly shutdownDelayMs: number;
  readonly shutdownTimeoutMs: number;
  readonly logLevel: Level;
  /** Operator pages that replace the embedded ones (`502.html`, ...); undefined for none. */
  readonly errorPagesDir: string | undefined;
  /** Serve the branded page instead of an upstream 5xx body, to browser navigations only. */
  readonly interceptUpstreamErrors: boolean;
  /** Entrypoint form: the app's command and arguments (after `--`); empty in the sidecar form. */
  readonly appCommand: readonly string[];
  /** After the app's stop signal, how long before SIGKILL. */
  readonly appStopTimeoutMs: number;
  /** The app's own health path, also required to answer 200-399 (CONTRACT §3b); undefined for none. */
  readonly upstreamHealthPath: string | undefined;
  /** The app's grpc.health.v1 service whose Check is the upstream check instead (CONTRACT §13; "" is the whole server); undefined for none. */
  readonly upstreamGrpcService: string | undefined;
  readonly upstreamHealthTimeoutMs: number;
  /** A check failing this long is named in one warn line per failing episode. */
  readonly warnAfterMs: number;
  /** Where Prometheus /metrics is served; undefined: metrics off. */
  readonly metricsListen: ListenAddress | undefined;
  /** At most this many proxied requests in flight to the app (CONTRACT §10); 0: no limit, the limiter is off. */
  readonly maxConcurrency: number;
  /** How many requests may wait for a slot (0: none wait); 10 × maxConcurrency unless given; 0 when the limiter is off. */
  readonly maxQueue: number;
  /** The longest a request waits in the queue (only used when the limiter is on). */
  readonly queueTimeoutMs: number;
  /** One `request` log line per finished proxied request (CONTRACT §11). */
  readonly accessLog: boolean;
  /** The protocol spoken to the app (CONTRACT §13): the client's own (`auto`), or always one. */
  readonly upstreamProtocol: "auto" | "http1" | "h2c";
  /** Entrypoint form: hold the app's start until the required listeners listen, at most this long (CONTRACT §14); 0: start at once. */
  readonly appStartWaitMs: number;
  /** When the start wait runs out: exit 1 instead of starting the app anyway. */
  readonly appStartWaitFatal: boolean;
  /** What the app receives after the drain; undefined: the signal we got (SIGINT stays SIGINT, else SIGTERM). */
  readonly appStopSignal: NodeJS.Signals | undefined;
  /** The loopback admin listener (CONTRACT §14); undefined: off. */
  readonly adminListen: ListenAddress | undefined;
  /** An exchange whose answer has begun (or whose upload is under way) and that moves no byte for this long is ended (CONTRACT §15); 0: off. */
  readonly exchangeIdleTimeoutMs: number;
  /** An exchange running longer is ended, 504 before the head (CONTRACT §15); 0: off. */
  readonly maxRequestDurationMs: number;
  /** A client connection older than this (less up to 10 % jitter) is closed gracefully (CONTRACT §15); 0: off. */
  readonly maxConnectionAgeMs: number;
  /** After an HTTP/2 connection's GOAWAY for its age, how long its streams may finish before they are reset. */
  readonly maxConnectionAgeGraceMs: number;
  /** Open client connections on the listener, both protocols (CONTRACT §18); at the limit the longest-idle one is shed; 0: no limit. */
  readonly maxConnections: number;
  /** Named HTTP checks (CONTRACT §15), in the order given; names unique across both kinds. */
  readonly requiredHttpChecks: readonly HttpCheckSpec[];
  /** Named gRPC health checks (CONTRACT §15), in the order given. */
  readonly requiredGrpcChecks: readonly GrpcCheckSpec[];
  /** Entrypoint form: exit 0 when the app ends because we stopped it (CONTRACT §17). */
  readonly exitZeroOnStop: boolean;
  /** Entrypoint form: loopback http URLs POSTed when the app exits on its own (CONTRACT §17), in the order given. */
  readonly appExitNotify: readonly string[];
  /** The app's health path `/app-health` asks (CONTRACT §17); undefined: the upstream check's path, or the route off. */
  readonly appHealthPath: string | undefined;
  /** --upstream-connect-retry (CONTRACT §17): how long after its arrival a refused request may be tried again; 0: off. */
  readonly upstreamConnectRetryMs: number;
  /** --metrics-merge (CONTRACT §17): the app's loopback exposition URL, served after ours on each scrape; undefined: off. */
  readonly metricsMerge: string | undefined;
}
