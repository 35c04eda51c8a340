// Every command-line option declared once (CONTRACT §1, §10, §11, §14): flag, env variable, default, help and parser; cli.ts derives registration, env handling and validation from it.
import { UPSTREAM_LISTENER_MODES, type Config } from "./config.js";
import { usageError } from "../errors.js";
import { LOG_LEVELS } from "../logger.js";
import { parseAdminListen, parseListenAddress } from "./listen-address.js";
import { parseStopSignal, STOP_SIGNALS } from "./stop-signal.js";
import {
  parseDurationOption,
  parseHealthPath,
  parseIntegerOption,
  parsePositiveDurationOption,
} from "./option-values.js";
import { MAX_REQUIRED_LISTENERS, parseRequiredListeners } from "./listener-specs.js";
import { MAX_NAMED_CHECKS, parseGrpcChecks, parseHttpChecks } from "./named-check-specs.js";
import { parseUpstream } from "./upstream-url.js";
import { parseProcRoot } from "./proc-root.js";
import { MAX_EXIT_NOTIFY_URLS, parseExitNotifyUrls, parseLoopbackUrl } from "./loopback-url.js";

/**
 * The Config fields the table fills, each from one option. `appCommand` comes from after `--`;
 * `maxQueue` is undefined when not given, because its default follows `--max-concurrency`.
 */
export type OptionFields = Omit<Config, "appCommand" | "maxQueue" | "requiredPorts"> & { readonly maxQueue: number | undefined };

interface OptionBase {
  /** The flag and its value's placeholder, as commander and --help show it: `--listen <[host]:port>`. */
  readonly flag: string;
  readonly help: string;
  /** The environment variable read when the flag is not given, where it is not the generated one (see {@link envName}). */
  readonly env?: string;
}

/**
 * `--flag <value>` with a default. The value comes from the flag, else the env variable (an empty
 * one counts as unset), else the default, and is parsed the same way from each; errors name the
 * flag or the variable, whichever gave the value: what the user wrote, in the pod's args or env.
 */
interface ValueOption<K extends keyof OptionFields> extends OptionBase {
  readonly kind: "value";
  readonly field: K;
  /** As a user would write it: parsed like a given value, and shown by --help (a duration as the start line logs it: `2m`, not `120s`). */
  readonly default: string;
  readonly parse: (input: string, text: string) => OptionFields[K];
}

/** `--flag <value>` without a default: the parser gets undefined when neither flag nor env gave one. */
interface OptionalValueOption<K extends keyof OptionFields> extends OptionBase {
  readonly kind: "optional";
  readonly field: K;
  readonly parse: (input: string, text: string | undefined) => OptionFields[K];
}

/**
 * A repeatable flag collected into a list; its env variable is a comma list that replaces it
 * entirely. Errors name the flag or the variable, whichever gave the values: the two forms differ.
 */
interface ListOption<K extends keyof OptionFields> extends OptionBase {
  readonly kind: "list";
  readonly env: string;
  readonly field: K;
  readonly parse: (input: string, values: readonly string[]) => OptionFields[K];
}

type BooleanField = { [K in keyof OptionFields]: OptionFields[K] extends boolean ? K : never }[keyof OptionFields];

/**
 * A flag without a value: on when given. Its env variable, if any, takes `1`/`true` or
 * `0`/`false`; anything else is a usage error naming the variable (the flag takes no value).
 */
interface SwitchOption<K extends BooleanField> extends OptionBase {
  readonly kind: "switch";
  readonly field: K;
}

/** One row of the table; the field's type and the parser's result agree by construction. */
export type OptionSpec =
  | { [K in keyof OptionFields]: ValueOption<K> | OptionalValueOption<K> | ListOption<K> }[keyof OptionFields]
  | { [K in BooleanField]: SwitchOption<K> }[BooleanField];

/** The flag's name without its placeholder (`--listen`): what usage errors and commander call it. */
export function flagName(spec: OptionSpec): string {
  return spec.flag.split(" ", 1)[0]!;
}

/**
 * The environment variable of an option: the row's own `env` where CONTRACT §1 names one that
 * differs, else `READINESS_PROXY_` and the flag's name without `--` and a leading `readiness-`
 * (the variables' prefix says it already), upper-snake: `--shutdown-delay` ->
 * `READINESS_PROXY_SHUTDOWN_DELAY`, `--readiness-warn-after` -> `READINESS_PROXY_WARN_AFTER`.
 * So every option has one, and a new row gets its own without a line.
 */
export function envName(spec: OptionSpec): string {
  return spec.env ?? `READINESS_PROXY_${flagName(spec).slice(2).replace(/^readiness-/, "").replace(/-/g, "_").toUpperCase()}`;
}

/** The option table, in --help's order. */
export const OPTIONS = [
  {
    kind: "value",
    field: "listen",
    flag: "--listen <[host]:port>",
    help: "the one listener: health paths and proxied traffic (:port = every IPv4 and IPv6 address)",
    env: "READINESS_PROXY_LISTEN",
    default: ":8080",
    parse: (input, text) => parseListenAddress(text) ?? expected(input, "expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080", text),
  },
  {
    kind: "value",
    field: "upstream",
    flag: "--upstream <url>",
    help: "the app behind the proxy (absolute http URL; a path prefix is kept), or unix:<path> (also unix://<path>) for an app on a unix socket",
    env: "READINESS_PROXY_UPSTREAM",
    default: "http://127.0.0.1:8000",
    parse: (input, text) => {
      const upstream = parseUpstream(text);
      return typeof upstream === "string" ? expected(input, upstream, text) : upstream;
    },
  },
  {
    kind: "list",
    field: "requiredListeners",
    flag: "--readiness-required-listener <port>",
    help: `a socket that must listen for /readyz to pass: <port> or tcp:<port> (LISTEN, any address), udp:<port> (bound), unix:<path> or unix:@<abstract name> (a listening stream socket); optionally <name>=<spec>; repeatable, at most ${MAX_REQUIRED_LISTENERS}`,
    env: "READINESS_PROXY_REQUIRED_LISTENERS",
    parse: parseRequiredListeners,
  },
  {
    kind: "value",
    field: "upstreamListener",
    flag: "--readiness-upstream-listener <auto|off>",
    help: "entrypoint form: auto also requires the upstream's own port when its host is loopback, at an address the proxy reaches (503 until the app listens there); off: not",
    env: "READINESS_PROXY_UPSTREAM_LISTENER",
    default: "auto",
    parse: (input, text) => UPSTREAM_LISTENER_MODES.find((mode) => mode === text) ?? expected(input, "expected auto or off", text),
  },
  {
    kind: "value",
    field: "cacheTtlMs",
    flag: "--readiness-cache-ttl <duration>",
    help: "how long one result of the whole check (every listener and the upstream check) serves all callers",
    env: "READINESS_PROXY_CACHE_TTL",
    default: "1s",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "failureThreshold",
    flag: "--readiness-failure-threshold <n>",
    help: "a passing check turns failing only after this many failed evaluations in a row (1..100); draining, maintenance and fail-open apply at once",
    env: "READINESS_PROXY_FAILURE_THRESHOLD",
    default: "1",
    parse: (input, text) => parseIntegerOption(input, text, 1, 100),
  },
  {
    kind: "value",
    field: "successThreshold",
    flag: "--readiness-success-threshold <n>",
    help: "a failing check turns passing again only after this many passing evaluations in a row (1..100)",
    env: "READINESS_PROXY_SUCCESS_THRESHOLD",
    default: "1",
    parse: (input, text) => parseIntegerOption(input, text, 1, 100),
  },
  {
    kind: "value",
    field: "procRoot",
    flag: "--proc-root <dir>",
    help: "where net/tcp and net/tcp6 are read; must exist at start",
    env: "READINESS_PROXY_PROC_ROOT",
    default: "/proc",
    parse: parseProcRoot,
  },
  {
    kind: "value",
    field: "responseHeaderTimeoutMs",
    flag: "--response-header-timeout <duration>",
    help: "the upstream must send its response head within this, else 504",
    default: "2m",
    parse: parsePositiveDurationOption,
  },
  {
    kind: "value",
    field: "shutdownDelayMs",
    flag: "--shutdown-delay <duration>",
    help: "after SIGTERM: keep serving while /readyz reports draining",
    default: "0s",
    parse: parseDurationOption,
  },
  { kind: "value", field: "shutdownTimeoutMs", flag: "--shutdown-timeout <duration>", help: "then wait this long for in-flight requests", default: "20s", parse: parseDurationOption },
  {
    kind: "value",
    field: "logLevel",
    flag: "--log-level <level>",
    help: `log level: ${LOG_LEVELS.join(", ")}`,
    env: "READINESS_PROXY_LOG_LEVEL",
    default: "info",
    parse: (input, text) => LOG_LEVELS.find((level) => level === text) ?? expected(input, `expected one of ${LOG_LEVELS.join(", ")}`, text),
  },
  {
    kind: "optional",
    field: "upstreamHealthPath",
    flag: "--readiness-upstream-path <path>",
    help: "also require the app's own health path to answer 200-399",
    env: "READINESS_PROXY_UPSTREAM_PATH",
    parse: parseHealthPath,
  },
  {
    kind: "optional",
    field: "upstreamGrpcService",
    flag: "--readiness-upstream-grpc-service <name>",
    help: 'instead of a path: require the app\'s grpc.health.v1 Check for this service to answer SERVING ("" = the whole server)',
    env: "READINESS_PROXY_UPSTREAM_GRPC_SERVICE",
    // Any name, "" included: it is the app's to define; it travels as a protobuf string.
    parse: (_input, text) => text,
  },
  {
    kind: "value",
    field: "upstreamHealthTimeoutMs",
    flag: "--readiness-upstream-timeout <duration>",
    help: "the app's health path, and each --readiness-required-http and --readiness-required-grpc check, fails when it takes longer",
    default: "1s",
    parse: parsePositiveDurationOption,
  },
  {
    kind: "value",
    field: "warnAfterMs",
    flag: "--readiness-warn-after <duration>",
    help: "a check failing this long is named in one warn line",
    default: "1m",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "appStopTimeoutMs",
    flag: "--app-stop-timeout <duration>",
    help: "entrypoint form: after the app's SIGTERM, wait this long before SIGKILL",
    default: "5s",
    parse: parseDurationOption,
  },
  {
    kind: "optional",
    field: "metricsListen",
    flag: "--metrics-listen <[host]:port>",
    help: "serve Prometheus /metrics on this separate listener (default: off)",
    env: "READINESS_PROXY_METRICS_LISTEN",
    parse: (input, text) => (text === undefined ? undefined : parseListenAddress(text) ?? expected(input, "expected [host]:port, like :9090 or 127.0.0.1:9090", text)),
  },
  {
    kind: "optional",
    field: "errorPagesDir",
    flag: "--error-pages-dir <dir>",
    help: "directory of 502.html, 503.html, 504.html, error.html replacing the embedded pages",
    parse: (_input, text) => text,
  },
  {
    kind: "switch",
    field: "interceptUpstreamErrors",
    flag: "--error-pages-intercept-upstream",
    help: "serve the branded page instead of the upstream's own 5xx body, to browser navigations only",
  },
  {
    kind: "value",
    field: "maxConcurrency",
    flag: "--max-concurrency <n>",
    help: "at most this many proxied requests in flight to the app, the rest queued; 0: no limit",
    env: "READINESS_PROXY_MAX_CONCURRENCY",
    default: "0",
    // 0 is accepted (off, as the default says) but not named: the range is what a limit may be.
    parse: (input, text) => parseIntegerOption(input, text, 0, 65535, "1..65535"),
  },
  {
    kind: "optional",
    field: "maxQueue",
    flag: "--max-queue <n>",
    help: "with --max-concurrency: how many requests may wait for a slot, first come first served; 0: none wait (default: 10 × --max-concurrency)",
    env: "READINESS_PROXY_MAX_QUEUE",
    parse: (input, text) => (text === undefined ? undefined : parseIntegerOption(input, text, 0, 1_000_000)),
  },
  {
    kind: "value",
    field: "queueTimeoutMs",
    flag: "--queue-timeout <duration>",
    help: "with --max-concurrency: the longest a request waits in the queue before its 503",
    env: "READINESS_PROXY_QUEUE_TIMEOUT",
    default: "10s",
    parse: parsePositiveDurationOption,
  },
  {
    kind: "switch",
    field: "accessLog",
    flag: "--access-log",
    help: "log one JSON line per finished proxied request (off by default)",
    env: "READINESS_PROXY_ACCESS_LOG",
  },
  {
    kind: "value",
    field: "upstreamProtocol",
    flag: "--upstream-protocol <auto|http1|h2c>",
    help: "the protocol spoken to the app: auto (the client's own), http1 or h2c",
    env: "READINESS_PROXY_UPSTREAM_PROTOCOL",
    default: "auto",
    parse: (input, text) => UPSTREAM_PROTOCOLS.find((protocol) => protocol === text) ?? expected(input, "expected auto, http1 or h2c", text),
  },
  {
    kind: "value",
    field: "appStartWaitMs",
    flag: "--app-start-wait <duration>",
    help: "entrypoint form: start the app only once every --readiness-required-listener port listens, waiting at most this long (0s: at once)",
    default: "0s",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "exchangeIdleTimeoutMs",
    flag: "--idle-timeout <duration>",
    help: "end a proxied exchange that moves no byte either way for this long once its answer began (or while its upload runs); streams that keep moving live on; 0s: off",
    default: "0s",
    parse: parseDurationOption,
  },
  {
    kind: "switch",
    field: "appStartWaitFatal",
    flag: "--app-start-wait-fatal",
    help: "with --app-start-wait: when the time runs out, exit 1 instead of starting the app anyway",
    env: "READINESS_PROXY_APP_START_WAIT_FATAL",
  },
  {
    kind: "optional",
    field: "appStopSignal",
    flag: "--app-stop-signal <signal>",
    help: `entrypoint form: the signal the app receives after the drain: ${STOP_SIGNALS.join(", ")} (default: SIGTERM; SIGINT after our SIGINT)`,
    env: "READINESS_PROXY_APP_STOP_SIGNAL",
    parse: parseStopSignal,
  },
  {
    kind: "optional",
    field: "adminListen",
    flag: "--admin-listen <host:port>",
    help: "serve POST /drain, POST /quitquitquit, POST|DELETE /maintenance, PUT /log-level and GET /status on this loopback address (default: off)",
    env: "READINESS_PROXY_ADMIN_LISTEN",
    parse: parseAdminListen,
  },
  {
    kind: "value",
    field: "maxRequestDurationMs",
    flag: "--max-request-duration <duration>",
    help: "end a proxied exchange running longer than this (504 when no answer began); WebSockets excepted; 0s: off",
    default: "0s",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "maxConnectionAgeMs",
    flag: "--max-connection-age <duration>",
    help: "close a client connection once this old, less up to 10% jitter (HTTP/1.1: Connection: close on its next answer; HTTP/2: GOAWAY); 0s: off",
    default: "0s",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "maxConnectionAgeGraceMs",
    flag: "--max-connection-age-grace <duration>",
    help: "after that GOAWAY, how long an HTTP/2 connection's streams may finish before they are reset",
    default: "30s",
    parse: parseDurationOption,
  },
  {
    kind: "value",
    field: "maxConnections",
    flag: "--max-connections <n>",
    help: "at most this many open client connections on the listener, both protocols; at the limit the longest-idle keep-alive one is closed for a new one, and with none idle new ones wait; 0: no limit",
    default: "10000",
    parse: (input, text) => parseIntegerOption(input, text, 0, 1_000_000),
  },
  {
    kind: "list",
    field: "requiredHttpChecks",
    flag: "--readiness-required-http <name=url>",
    help: `a check <name> that passes while GET <url> answers 200-399 within --readiness-upstream-timeout (a mesh agent's readiness); repeatable, at most ${MAX_NAMED_CHECKS}`,
    env: "READINESS_PROXY_REQUIRED_HTTP",
    parse: parseHttpChecks,
  },
  {
    kind: "list",
    field: "requiredGrpcChecks",
    flag: "--readiness-required-grpc <name=host:port[/service]>",
    help: `a check <name> that passes while that server's grpc.health.v1 Check answers SERVING; repeatable, at most ${MAX_NAMED_CHECKS}`,
    env: "READINESS_PROXY_REQUIRED_GRPC",
    parse: parseGrpcChecks,
  },
  {
    kind: "switch",
    field: "exitZeroOnStop",
    flag: "--exit-zero-on-stop",
    help: "entrypoint form: exit 0 when the app ends because we stopped it (SIGTERM, SIGINT, POST /quitquitquit), whatever its code; an app that exits on its own keeps its code",
    env: "READINESS_PROXY_EXIT_ZERO_ON_STOP",
  },
  {
    kind: "list",
    field: "appExitNotify",
    flag: "--app-exit-notify <url>",
    help: `entrypoint form: when the app exits on its own, POST an empty body to this loopback http URL (a Job's mesh sidecar: Istio's :15020/quitquitquit, Linkerd's :4191/shutdown); repeatable, at most ${MAX_EXIT_NOTIFY_URLS}`,
    env: "READINESS_PROXY_APP_EXIT_NOTIFY",
    parse: parseExitNotifyUrls,
  },
  {
    kind: "optional",
    field: "appHealthPath",
    flag: "--app-health-path <path>",
    help: "GET /app-health answers with the app's own status at this path, on a connection of its own, never queued: for a livenessProbe (default: --readiness-upstream-path; neither: /app-health is proxied)",
    env: "READINESS_PROXY_APP_HEALTH_PATH",
    parse: parseHealthPath,
  },
  {
    kind: "value",
    field: "upstreamConnectRetryMs",
    flag: "--upstream-connect-retry <duration>",
    help: "a request whose connection to the app is refused (nothing was sent) is tried again, any method, backing off 25ms to 250ms, until this long after it arrived; then 502; 0s: off",
    default: "0s",
    parse: parseDurationOption,
  },
  {
    kind: "optional",
    field: "metricsMerge",
    flag: "--metrics-merge <url>",
    help: "with --metrics-listen: each scrape of /metrics also fetches the app's metrics from this loopback http URL (at most 2s, 8MiB) and serves them after ours, families whose names clash with ours dropped: one scrape target per pod",
    env: "READINESS_PROXY_METRICS_MERGE",
    parse: (input, text) => (text === undefined ? undefined : parseLoopbackUrl(input, text)),
  },
] as const satisfies readonly OptionSpec[];

const UPSTREAM_PROTOCOLS = ["auto", "http1", "h2c"] as const;

/** Options that only mean something with the limiter on: given without `--max-concurrency` above 0, a usage error. */
export const LIMITER_OPTIONS: ReadonlyArray<keyof OptionFields> = ["maxQueue", "queueTimeoutMs"];

function expected(input: string, what: string, text: string): never {
  throw usageError(input, what, text);
}

/** Compile-time: every field has its row. A field without one makes this `false` and the build fails. */
const EVERY_FIELD_HAS_AN_OPTION: Exclude<keyof OptionFields, (typeof OPTIONS)[number]["field"]> extends never ? true : false = true;
void EVERY_FIELD_HAS_AN_OPTION;
