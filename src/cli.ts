// The command line: commander 14 options (CONTRACT §1) -> a validated Config, or an exit with code 2.
import { Command, CommanderError, Option } from "commander";
import type { Level } from "pino";
import { formatDuration, parseDuration } from "./config/duration.js";
import { parseListenAddress, type ListenAddress } from "./config/listen-address.js";
import { parseUpstream, type Upstream } from "./config/upstream-url.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError, usageError } from "./errors.js";
import { LOG_LEVELS } from "./logger.js";
import { versionLine } from "./version.js";

/** Everything the daemon needs, validated. */
export interface Config {
  readonly listen: ListenAddress;
  readonly upstream: Upstream;
  /** Ascending and unique, at most {@link MAX_REQUIRED_LISTENERS}. */
  readonly requiredPorts: readonly number[];
  readonly cacheTtlMs: number;
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
  readonly upstreamHealthTimeoutMs: number;
  /** A check failing this long is named in one warn line per failing episode. */
  readonly warnAfterMs: number;
  /** Where Prometheus /metrics is served; undefined: metrics off. */
  readonly metricsListen: ListenAddress | undefined;
}

/** What the command line asks for: run with a config, or exit (help, version, usage error). */
export type CommandLine = { readonly action: "run"; readonly config: Config } | { readonly action: "exit"; readonly exitCode: number };

/** Where commander and our own usage errors write; tests capture them. */
export interface CommandLineOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

export const MAX_REQUIRED_LISTENERS = 16;
const REQUIRED_FLAG = "--readiness-required-listener";
const REQUIRED_ENV = "READINESS_PROXY_REQUIRED_LISTENERS";

interface RawOptions {
  listen: string;
  upstream: string;
  readinessRequiredListener: string[];
  readinessCacheTtl: string;
  procRoot: string;
  responseHeaderTimeout: string;
  shutdownDelay: string;
  shutdownTimeout: string;
  logLevel: string;
  errorPagesDir?: string;
  errorPagesInterceptUpstream?: boolean;
  appStopTimeout: string;
  readinessUpstreamPath?: string;
  readinessUpstreamTimeout: string;
  readinessWarnAfter: string;
  metricsListen?: string;
}

/** Separates the app's command line (entrypoint form) from ours. */
const APP_SEPARATOR = "--";

/** Builds the commander program; options are registered here and only here. */
export function buildProgram(output: CommandLineOutput): Command {
  const collect = (value: string, previous: string[]) => [...previous, value];
  return new Command()
    .name("readiness-proxy")
    .description(
      "HTTP reverse proxy whose /readyz passes only while the required local TCP listeners exist.\n" +
        "/health and /healthz: liveness. /readyz: readiness. Everything else goes to the upstream.",
    )
    .version(versionLine(), "--version", "print the version and the Node runtime, then exit")
    .helpOption("-h, --help", "print this help, then exit")
    .addOption(
      new Option("--listen <[host]:port>", "the one listener: health paths and proxied traffic (:port = every IPv4 and IPv6 address)")
        .default(":8080")
        .env("READINESS_PROXY_LISTEN"),
    )
    .addOption(
      new Option("--upstream <url>", "the app behind the proxy (absolute http URL; a path prefix is kept)")
        .default("http://127.0.0.1:8000")
        .env("READINESS_PROXY_UPSTREAM"),
    )
    .addOption(
      new Option(
        `${REQUIRED_FLAG} <port>`,
        `a local TCP port that must be in LISTEN state for /readyz to pass; repeatable, at most ${MAX_REQUIRED_LISTENERS} (env: ${REQUIRED_ENV}, comma list)`,
      )
        .argParser(collect)
        .default([], "none"),
    )
    .addOption(
      new Option("--readiness-cache-ttl <duration>", "how long one listener check serves all callers")
        .default("1s")
        .env("READINESS_PROXY_CACHE_TTL"),
    )
    .addOption(
      new Option("--proc-root <dir>", "where net/tcp and net/tcp6 are read").default("/proc").env("READINESS_PROXY_PROC_ROOT"),
    )
    .addOption(new Option("--response-header-timeout <duration>", "the upstream must send its response head within this, else 504").default("120s"))
    .addOption(new Option("--shutdown-delay <duration>", "after SIGTERM: keep serving while /readyz reports draining").default("0s"))
    .addOption(new Option("--shutdown-timeout <duration>", "then wait this long for in-flight requests").default("20s"))
    .addOption(
      new Option("--log-level <level>", `log level: ${LOG_LEVELS.join(", ")}`).default("info").env("READINESS_PROXY_LOG_LEVEL"),
    )
    .addOption(
      new Option("--readiness-upstream-path <path>", "also require the app's own health path to answer 200-399").env("READINESS_PROXY_UPSTREAM_PATH"),
    )
    .addOption(new Option("--readiness-upstream-timeout <duration>", "the app's health path fails when it takes longer").default("1s"))
    .addOption(new Option("--readiness-warn-after <duration>", "a check failing this long is named in one warn line").default("60s"))
    .addOption(
      new Option("--app-stop-timeout <duration>", "entrypoint form: after the app's SIGTERM, wait this long before SIGKILL").default("5s"),
    )
    .addOption(
      new Option("--metrics-listen <[host]:port>", "serve Prometheus /metrics on this separate listener (default: off)").env(
        "READINESS_PROXY_METRICS_LISTEN",
      ),
    )
    .addOption(new Option("--error-pages-dir <dir>", "directory of 502.html, 503.html, 504.html, error.html replacing the embedded pages"))
    .addOption(
      new Option(
        "--error-pages-intercept-upstream",
        "serve the branded page instead of the upstream's own 5xx body, to browser navigations only",
      ),
    )
    .usage("[options] [-- <command> [args...]]")
    .addHelpText("after", "\nWith -- <command>, the proxy also runs the app: started after the listener opens, stopped after the drain.")
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: output.writeOut, writeErr: output.writeErr });
}

/**
 * Parses `argv` (without node and script) and `env`. Usage errors are written as one line,
 * `error: <flag>: <expected>, got "<value>"`, and come back as exit code 2: never a stack trace.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv, output: CommandLineOutput): CommandLine {
  const program = buildProgram(output);
  // Everything after the first `--` is the app's, never parsed as ours.
  const separator = argv.indexOf(APP_SEPARATOR);
  const ours = separator < 0 ? argv : argv.slice(0, separator);
  const appCommand = separator < 0 ? [] : argv.slice(separator + 1);
  try {
    program.parse([...ours], { from: "user" });
    if (separator >= 0 && (appCommand.length === 0 || appCommand[0] === "")) {
      throw usageError(APP_SEPARATOR, "expected the app's command after it, like -- python3 -m http.server 8000");
    }
    const raw = withEnvironment(program, env);
    const fromEnv = program.getOptionValueSource("readinessRequiredListener") !== "cli";
    return { action: "run", config: { ...validate(raw, fromEnv ? env[REQUIRED_ENV] : undefined), appCommand } };
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; commander has already printed its own "error: ..." line otherwise.
      const isInformational = error.code === "commander.helpDisplayed" || error.code === "commander.version";
      return { action: "exit", exitCode: isInformational ? EXIT_CODES.ok : EXIT_CODES.usage };
    }
    if (error instanceof ReadinessProxyError && error.code === ERROR_CODES.usage) {
      output.writeErr(`error: ${error.message}\n`);
      return { action: "exit", exitCode: EXIT_CODES.usage };
    }
    throw error;
  }
}

/**
 * The parsed options with every option not given on the command line taken from `env` (the
 * environment we were handed, not necessarily process.env, which commander reads), else its
 * default. Commander's `.env()` stays on the options for the help text.
 */
function withEnvironment(program: Command, env: NodeJS.ProcessEnv): RawOptions {
  const raw = { ...program.opts<RawOptions>() } as RawOptions & Record<string, unknown>;
  for (const option of program.options) {
    const key = option.attributeName();
    if (option.envVar === undefined || program.getOptionValueSource(key) === "cli") continue;
    raw[key] = env[option.envVar] ?? option.defaultValue;
  }
  return raw;
}

function validate(raw: RawOptions, requiredFromEnv: string | undefined): Omit<Config, "appCommand"> {
  const listen = parseListenAddress(raw.listen);
  if (!listen) throw usageError("--listen", "expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080", raw.listen);
  const upstream = parseUpstream(raw.upstream);
  if (typeof upstream === "string") throw usageError("--upstream", upstream, raw.upstream);
  const logLevel = LOG_LEVELS.find((level) => level === raw.logLevel);
  if (!logLevel) throw usageError("--log-level", `expected one of ${LOG_LEVELS.join(", ")}`, raw.logLevel);
  const requiredPorts =
    requiredFromEnv === undefined
      ? parseRequiredPorts(raw.readinessRequiredListener, REQUIRED_FLAG)
      : parseRequiredPorts(requiredFromEnv.split(",").map((port) => port.trim()).filter((port) => port !== ""), REQUIRED_ENV);
  const responseHeaderTimeoutMs = duration("--response-header-timeout", raw.responseHeaderTimeout);
  if (responseHeaderTimeoutMs === 0) throw usageError("--response-header-timeout", "expected a duration above 0", raw.responseHeaderTimeout);
  const upstreamHealthTimeoutMs = duration("--readiness-upstream-timeout", raw.readinessUpstreamTimeout);
  if (upstreamHealthTimeoutMs === 0) throw usageError("--readiness-upstream-timeout", "expected a duration above 0", raw.readinessUpstreamTimeout);
  const upstreamHealthPath = raw.readinessUpstreamPath;
  if (upstreamHealthPath !== undefined && !HEALTH_PATH.test(upstreamHealthPath)) {
    throw usageError("--readiness-upstream-path", "expected a path starting with / without spaces or control characters", upstreamHealthPath);
  }
  const metricsListen = raw.metricsListen === undefined ? undefined : parseListenAddress(raw.metricsListen);
  if (raw.metricsListen !== undefined && !metricsListen) {
    throw usageError("--metrics-listen", "expected [host]:port, like :9090 or 127.0.0.1:9090", raw.metricsListen);
  }
  if (metricsListen && metricsListen.port !== 0 && metricsListen.port === listen.port && sameHostOrWildcard(metricsListen.host, listen.host)) {
    throw usageError("--metrics-listen", "expected an address other than --listen's", raw.metricsListen);
  }
  return {
    listen,
    upstream,
    requiredPorts,
    cacheTtlMs: duration("--readiness-cache-ttl", raw.readinessCacheTtl),
    procRoot: raw.procRoot,
    responseHeaderTimeoutMs,
    shutdownDelayMs: duration("--shutdown-delay", raw.shutdownDelay),
    shutdownTimeoutMs: duration("--shutdown-timeout", raw.shutdownTimeout),
    logLevel,
    errorPagesDir: raw.errorPagesDir,
    interceptUpstreamErrors: raw.errorPagesInterceptUpstream === true,
    appStopTimeoutMs: duration("--app-stop-timeout", raw.appStopTimeout),
    upstreamHealthPath,
    upstreamHealthTimeoutMs,
    warnAfterMs: duration("--readiness-warn-after", raw.readinessWarnAfter),
    metricsListen,
  };
}

/** An origin-form path (a query allowed): no spaces, no control bytes, nothing undici would refuse. */
const HEALTH_PATH = /^\/[\x21-\x7e]*$/;

/** Two listen hosts that would collide on one port: the same host, or either one every address. */
function sameHostOrWildcard(a: string | undefined, b: string | undefined): boolean {
  const wildcard = (host: string | undefined) => host === undefined || host === "0.0.0.0" || host === "::";
  return wildcard(a) || wildcard(b) || a === b;
}

/** Ports as given (flag values or env list) -> ascending, unique, bounded. */
function parseRequiredPorts(values: readonly string[], input: string): number[] {
  if (values.length > MAX_REQUIRED_LISTENERS) {
    throw usageError(input, `expected at most ${MAX_REQUIRED_LISTENERS} ports`, `${values.length} ports`);
  }
  const ports = new Set<number>();
  for (const value of values) {
    const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
    if (!(port >= 1 && port <= 65535)) throw usageError(input, "expected a port 1..65535", value);
    if (ports.has(port)) throw usageError(input, "expected each port once", `${value} twice`);
    ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}

function duration(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw usageError(flag, "expected a duration like 500ms, 1s or 1m30s", text);
  return ms;
}

/** The effective settings, as logged at start-up. */
export function describeConfig(config: Config): Record<string, string> {
  return {
    readinessCacheTtl: formatDuration(config.cacheTtlMs),
    responseHeaderTimeout: formatDuration(config.responseHeaderTimeoutMs),
    shutdownDelay: formatDuration(config.shutdownDelayMs),
    shutdownTimeout: formatDuration(config.shutdownTimeoutMs),
    appStopTimeout: formatDuration(config.appStopTimeoutMs),
    readinessUpstreamTimeout: formatDuration(config.upstreamHealthTimeoutMs),
    readinessWarnAfter: formatDuration(config.warnAfterMs),
    // What the pod's terminationGracePeriodSeconds must cover, or the kubelet's SIGKILL comes first.
    shutdownBudget: formatDuration(config.shutdownDelayMs + config.shutdownTimeoutMs + (config.appCommand.length > 0 ? config.appStopTimeoutMs : 0)),
  };
}
