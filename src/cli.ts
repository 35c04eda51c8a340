// The command line: commander 14 options (CONTRACT §1) -> a validated Config, or an exit with code 2.
import { Command, CommanderError, Option } from "commander";
import type { Config } from "./config/config.js";
import { formatDuration } from "./config/duration.js";
import { unknownVariables } from "./config/environment-check.js";
import { formatListenAddress } from "./config/listen-address.js";
import { envName, flagName, LIMITER_OPTIONS, OPTIONS, type OptionFields, type OptionSpec } from "./config/option-table.js";
import { parseSwitchOption } from "./config/option-values.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError, usageError } from "./errors.js";
import { versionLine } from "./version.js";

/** A mistake worth a warn line that does not stop the start; main.ts logs it once the logger exists. */
export interface ConfigWarning {
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What the command line asks for: run with a config (and warnings to log), or exit (help, version, usage error). */
export type CommandLine =
  | { readonly action: "run"; readonly config: Config; readonly warnings: readonly ConfigWarning[] }
  | { readonly action: "exit"; readonly exitCode: number };

/** The warn line for a `READINESS_PROXY_*` variable no option reads: ignored, like an unset one, but said. */
export const UNKNOWN_VARIABLE_MESSAGE = "unknown environment variable ignored";

/** Where commander and our own usage errors write; tests capture them. */
export interface CommandLineOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

/** The commands that talk to a running proxy's admin listener (src/admin/admin-command.ts, loaded only for them). */
export const ADMIN_COMMANDS: readonly string[] = ["drain", "maintenance", "status", "stop", "log-level"];

/** Whether `argv` (without node and script) is one of {@link ADMIN_COMMANDS} rather than a daemon's command line. */
export function isAdminCommand(argv: readonly string[]): boolean {
  return argv[0] !== undefined && ADMIN_COMMANDS.includes(argv[0]);
}

/** Separates the app's command line (entrypoint form) from ours. */
const APP_SEPARATOR = "--";

/** Builds the commander program; the options come from the table, in its order. */
export function buildProgram(output: CommandLineOutput): Command {
  const program = new Command()
    .name("readiness-proxy")
    .description(
      "HTTP reverse proxy whose /readyz passes only while the required local TCP listeners exist.\n" +
        "/health and /healthz: liveness. /readyz: readiness. Everything else goes to the upstream.",
    )
    .version(versionLine(), "--version", "print the version and the Node runtime, then exit")
    .helpOption("-h, --help", "print this help, then exit");
  for (const spec of OPTIONS) program.addOption(commanderOption(spec));
  return program
    .usage("[options] [-- <command> [args...]]")
    .addHelpText(
      "after",
      "\nWith -- <command>, the proxy also runs the app: started after the listener opens (and, with --app-start-wait, once the\n" +
        "required listeners listen), stopped after the drain.\n\n" +
        "Commands for a running proxy's --admin-listen (flag or READINESS_PROXY_ADMIN_LISTEN), e.g. in a preStop exec:\n" +
        "  readiness-proxy drain                          begin the drain without stopping\n" +
        "  readiness-proxy maintenance on [--for <d>]     fail the maintenance check (until off, or for <d>)\n" +
        "  readiness-proxy maintenance off\n" +
        "  readiness-proxy stop                           the whole shutdown, as SIGTERM runs it, then exit\n" +
        "  readiness-proxy log-level <level>              log at this level from now on, until the process ends\n" +
        "  readiness-proxy status                         readiness, checks, drain, maintenance, requests in flight",
    )
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: output.writeOut, writeErr: output.writeErr });
}

/**
 * One table row as commander sees it. Env variables are registered for the help text only:
 * values are read from the `env` we are handed (see {@link readOptions}). A list's variable is a
 * comma list, which commander cannot split, so the help names it in the description instead.
 */
function commanderOption(spec: OptionSpec): Option {
  switch (spec.kind) {
    case "list":
      return new Option(spec.flag, `${spec.help} (env: ${envName(spec)}, comma list)`)
        .argParser((value: string, previous: string[]) => [...previous, value])
        .default([], "none");
    case "value":
      return new Option(spec.flag, spec.help).default(spec.default).env(envName(spec));
    case "optional":
      return new Option(spec.flag, spec.help).env(envName(spec));
    case "switch":
      return new Option(spec.flag, `${spec.help} (env: ${envName(spec)}: 1, true, 0 or false)`);
  }
}

/**
 * Parses `argv` (without node and script) and `env`. Usage errors are written as one line,
 * `error: <flag or variable>: <expected>, got "<value>"`, and come back as exit code 2: never a
 * stack trace.
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
    const options = readOptions(program, env);
    validateStartWait(options, appCommand);
    validateAppExit(options, appCommand);
    const config = { ...validateTogether(options), appCommand };
    const warnings = unknownVariables(env, OPTIONS.map(envName)).map(({ variable, closest }) => ({ msg: UNKNOWN_VARIABLE_MESSAGE, fields: { variable, didYouMean: closest } }));
    return { action: "run", config, warnings };
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
 * Each option's parsed value, and how it was given: the text parsed, whether the user gave it,
 * and where (the flag, or the variable's name), so that every error names what the user typed.
 */
interface ReadOptions {
  readonly fields: OptionFields;
  readonly texts: ReadonlyMap<keyof OptionFields, string>;
  readonly given: ReadonlySet<keyof OptionFields>;
  readonly sources: ReadonlyMap<keyof OptionFields, string>;
}

/**
 * Every table row parsed in order: the flag's value when given on the command line, else the
 * variable's in `env` (the environment we were handed, not necessarily process.env, which
 * commander reads), else the default. One rule for every variable: an empty one is as if unset
 * (what a Helm chart renders for a value left blank), so it never turns a check on or fails a
 * start. The first bad value throws its usage error, naming the flag or the variable it came from.
 */
function readOptions(program: Command, env: NodeJS.ProcessEnv): ReadOptions {
  const values = program.opts<Record<string, unknown>>();
  const fields: Record<string, unknown> = {};
  const texts = new Map<keyof OptionFields, string>();
  const given = new Set<keyof OptionFields>();
  const sources = new Map<keyof OptionFields, string>();
  // One pass over commander's options, not a search of them per row: the rows are read at every start.
  const byFlag = new Map(program.options.map((option) => [option.long, option]));
  for (const spec of OPTIONS as readonly OptionSpec[]) {
    const name = flagName(spec);
    const key = byFlag.get(name)!.attributeName();
    const fromFlag = program.getOptionValueSource(key) === "cli";
    const variable = envName(spec);
    const fromEnv = fromFlag || env[variable] === "" ? undefined : env[variable];
    if (fromFlag || fromEnv !== undefined) given.add(spec.field);
    const source = fromEnv === undefined ? name : variable;
    sources.set(spec.field, source);
    switch (spec.kind) {
      case "value":
      case "optional": {
        const text = fromFlag ? (values[key] as string) : (fromEnv ?? (spec.kind === "value" ? spec.default : undefined));
        if (text !== undefined) texts.set(spec.field, text);
        fields[spec.field] = (spec.parse as (input: string, text: string | undefined) => unknown)(source, text);
        break;
      }
      case "list": {
        const list = fromEnv?.split(",").map((item) => item.trim()).filter((item) => item !== "");
        fields[spec.field] = list === undefined ? spec.parse(name, values[key] as string[]) : spec.parse(variable, list);
        break;
      }
      case "switch":
        fields[spec.field] = fromFlag || (fromEnv !== undefined && parseSwitchOption(variable, fromEnv));
        break;
    }
  }
  // Complete: the table has a row for every field (checked at compile time in option-table.ts).
  return { fields: fields as unknown as OptionFields, texts, given, sources };
}

/** The rules that span options, then the defaults that follow from other options. Errors name where each value came from. */
function validateTogether({ fields, texts, given, sources }: ReadOptions): Omit<Config, "appCommand"> {
  const flagOf = (field: keyof OptionFields) => flagName(OPTIONS.find((spec) => spec.field === field)!);
  const sourceOf = (field: keyof OptionFields) => sources.get(field)!;
  const { listen, metricsListen, maxConcurrency, requiredListeners } = fields;
  const requiredPorts = requiredListeners.flatMap((listener) => (listener.kind === "tcp" ? [listener.port] : []));
  if (metricsListen && metricsListen.port !== 0 && metricsListen.port === listen.port && sameHostOrWildcard(metricsListen.host, listen.host)) {
    throw usageError(sourceOf("metricsListen"), "expected an address other than --listen's", texts.get("metricsListen"));
  }
  // The proxy's own socket is in the table it reads: such a check would always pass, whatever it was meant to watch.
  const ownPort = [listen.port, metricsListen?.port].find((port) => port !== undefined && port !== 0 && requiredPorts.includes(port));
  if (ownPort !== undefined) {
    const whose = ownPort === listen.port ? "--listen" : "--metrics-listen";
    throw usageError(sourceOf("requiredListeners"), `expected a port other than ${whose}'s own (the proxy listens there, so it would always pass)`, String(ownPort));
  }
  // The merge happens on a scrape of our /metrics: without the listener nothing would ever fetch it.
  if (fields.metricsMerge !== undefined && !metricsListen) throw usageError(sourceOf("metricsMerge"), "expected only with --metrics-listen", texts.get("metricsMerge"));
  if (given.has("upstreamGrpcService") && given.has("upstreamHealthPath")) {
    throw usageError(sourceOf("upstreamGrpcService"), `expected either it or ${flagOf("upstreamHealthPath")}, not both`, texts.get("upstreamGrpcService"));
  }
  const httpNames = new Set(fields.requiredHttpChecks.map((check) => check.name));
  const twice = fields.requiredGrpcChecks.find((check) => httpNames.has(check.name));
  if (twice) throw usageError(flagOf("requiredGrpcChecks"), `expected a name not used by ${flagOf("requiredHttpChecks")}`, twice.name);
  const listenerNames = new Set(requiredListeners.map((listener) => listener.name));
  for (const field of ["requiredHttpChecks", "requiredGrpcChecks"] as const) {
    const taken = fields[field].find((check) => listenerNames.has(check.name));
    if (taken) throw usageError(flagOf(field), `expected a name not used by ${flagOf("requiredListeners")}`, taken.name);
  }
  if (maxConcurrency === 0) {
    // A queue without a limit would never hold anything: the operator meant something else.
    const stray = LIMITER_OPTIONS.find((field) => given.has(field));
    if (stray) throw usageError(sourceOf(stray), "only with --max-concurrency", texts.get(stray));
  }
  return { ...fields, requiredPorts, maxQueue: fields.maxQueue ?? 10 * maxConcurrency };
}

/**
 * The start gate (CONTRACT §14) holds an app until the operator's required ports listen: without
 * an app (`--`) or without such a port it would mean nothing, so it is a usage error.
 */
function validateStartWait({ fields, texts }: ReadOptions, appCommand: readonly string[]): void {
  if (fields.appStartWaitFatal && fields.appStartWaitMs === 0) throw usageError("--app-start-wait-fatal", "expected only with --app-start-wait above 0s");
  if (fields.appStartWaitMs === 0) return;
  const text = texts.get("appStartWaitMs");
  if (appCommand.length === 0) throw usageError("--app-start-wait", "expected only in the entrypoint form (with -- <command>)", text);
  if (fields.requiredListeners.length === 0) throw usageError("--app-start-wait", "expected with at least one --readiness-required-listener to wait for", text);
}

/** What the proxy does at the app's exit (CONTRACT §17) means nothing without an app: a usage error, as for --app-start-wait. */
function validateAppExit({ fields, sources }: ReadOptions, appCommand: readonly string[]): void {
  if (appCommand.length > 0) return;
  if (fields.exitZeroOnStop) throw usageError(sources.get("exitZeroOnStop")!, "expected only in the entrypoint form (with -- <command>)");
  if (fields.appExitNotify.length > 0) throw usageError(sources.get("appExitNotify")!, "expected only in the entrypoint form (with -- <command>)", fields.appExitNotify[0]);
}

/** Two listen hosts that would collide on one port: the same host, or either one every address. */
function sameHostOrWildcard(a: string | undefined, b: string | undefined): boolean {
  const wildcard = (host: string | undefined) => host === undefined || host === "0.0.0.0" || host === "::";
  return wildcard(a) || wildcard(b) || a === b;
}

/** The effective settings, as logged at start-up; the limiter's and the access log's only when they are on. */
export function describeConfig(config: Config): Record<string, string | number | boolean> {
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
    ...(config.maxConcurrency > 0 && { maxConcurrency: config.maxConcurrency, maxQueue: config.maxQueue, queueTimeout: formatDuration(config.queueTimeoutMs) }),
    ...(config.accessLog && { accessLog: true }),
    ...(config.appStartWaitMs > 0 && { appStartWait: formatDuration(config.appStartWaitMs), appStartWaitFatal: config.appStartWaitFatal }),
    ...(config.appStopSignal && { appStopSignal: config.appStopSignal }),
    ...(config.adminListen && { adminListen: formatListenAddress(config.adminListen) }),
    ...(config.exchangeIdleTimeoutMs > 0 && { idleTimeout: formatDuration(config.exchangeIdleTimeoutMs) }),
    ...(config.maxRequestDurationMs > 0 && { maxRequestDuration: formatDuration(config.maxRequestDurationMs) }),
    ...(config.exitZeroOnStop && { exitZeroOnStop: true }),
    ...(config.upstreamConnectRetryMs > 0 && { upstreamConnectRetry: formatDuration(config.upstreamConnectRetryMs) }),
    ...(config.appExitNotify.length > 0 && { appExitNotify: config.appExitNotify.join(",") }),
    ...(config.metricsMerge !== undefined && { metricsMerge: config.metricsMerge }),
    ...(config.maxConnectionAgeMs > 0 && { maxConnectionAge: formatDuration(config.maxConnectionAgeMs), maxConnectionAgeGrace: formatDuration(config.maxConnectionAgeGraceMs) }),
  };
}
