// The command line: commander 14 options (CONTRACT §1) -> a validated Config, or an exit with code 2.
import { Command, CommanderError, Option } from "commander";
import type { Config } from "./config/config.js";
import { formatDuration } from "./config/duration.js";
import { envName, flagName, LIMITER_OPTIONS, OPTIONS, type OptionFields, type OptionSpec } from "./config/option-table.js";
import { parseSwitchOption } from "./config/option-values.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError, usageError } from "./errors.js";
import { versionLine } from "./version.js";

/** What the command line asks for: run with a config, or exit (help, version, usage error). */
export type CommandLine = { readonly action: "run"; readonly config: Config } | { readonly action: "exit"; readonly exitCode: number };

/** Where commander and our own usage errors write; tests capture them. */
export interface CommandLineOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
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
    .addHelpText("after", "\nWith -- <command>, the proxy also runs the app: started after the listener opens, stopped after the drain.")
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
    return { action: "run", config: { ...validateTogether(readOptions(program, env)), appCommand } };
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

/** Each option's parsed value, and how it was given: the text parsed, and whether the user gave it (flag or env). */
interface ReadOptions {
  readonly fields: OptionFields;
  readonly texts: ReadonlyMap<keyof OptionFields, string>;
  readonly given: ReadonlySet<keyof OptionFields>;
}

/**
 * Every table row parsed in order: the flag's value when given on the command line, else the
 * variable's in `env` (the environment we were handed, not necessarily process.env, which
 * commander reads), else the default. The first bad value throws its usage error.
 */
function readOptions(program: Command, env: NodeJS.ProcessEnv): ReadOptions {
  const values = program.opts<Record<string, unknown>>();
  const fields: Record<string, unknown> = {};
  const texts = new Map<keyof OptionFields, string>();
  const given = new Set<keyof OptionFields>();
  for (const spec of OPTIONS as readonly OptionSpec[]) {
    const name = flagName(spec);
    const key = program.options.find((option) => option.long === name)!.attributeName();
    const fromFlag = program.getOptionValueSource(key) === "cli";
    const variable = envName(spec);
    const fromEnv = fromFlag ? undefined : env[variable];
    if (fromFlag || fromEnv !== undefined) given.add(spec.field);
    switch (spec.kind) {
      case "value":
      case "optional": {
        const text = fromFlag ? (values[key] as string) : (fromEnv ?? (spec.kind === "value" ? spec.default : undefined));
        if (text !== undefined) texts.set(spec.field, text);
        fields[spec.field] = (spec.parse as (input: string, text: string | undefined) => unknown)(name, text);
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
  return { fields: fields as unknown as OptionFields, texts, given };
}

/** The rules that span options, then the defaults that follow from other options. */
function validateTogether({ fields, texts, given }: ReadOptions): Omit<Config, "appCommand"> {
  const flagOf = (field: keyof OptionFields) => flagName(OPTIONS.find((spec) => spec.field === field)!);
  const { listen, metricsListen, maxConcurrency } = fields;
  if (metricsListen && metricsListen.port !== 0 && metricsListen.port === listen.port && sameHostOrWildcard(metricsListen.host, listen.host)) {
    throw usageError("--metrics-listen", "expected an address other than --listen's", texts.get("metricsListen"));
  }
  if (given.has("upstreamGrpcService") && given.has("upstreamHealthPath")) {
    throw usageError(flagOf("upstreamGrpcService"), `expected either it or ${flagOf("upstreamHealthPath")}, not both`, texts.get("upstreamGrpcService"));
  }
  const httpNames = new Set(fields.requiredHttpChecks.map((check) => check.name));
  const twice = fields.requiredGrpcChecks.find((check) => httpNames.has(check.name));
  if (twice) throw usageError(flagOf("requiredGrpcChecks"), `expected a name not used by ${flagOf("requiredHttpChecks")}`, twice.name);
  if (maxConcurrency === 0) {
    // A queue without a limit would never hold anything: the operator meant something else.
    const stray = LIMITER_OPTIONS.find((field) => given.has(field));
    if (stray) throw usageError(flagOf(stray), "expected only with --max-concurrency 1..65535", texts.get(stray));
  }
  return { ...fields, maxQueue: fields.maxQueue ?? 10 * maxConcurrency };
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
    ...(config.idleTimeoutMs > 0 && { idleTimeout: formatDuration(config.idleTimeoutMs) }),
    ...(config.maxRequestDurationMs > 0 && { maxRequestDuration: formatDuration(config.maxRequestDurationMs) }),
    ...(config.maxConnectionAgeMs > 0 && { maxConnectionAge: formatDuration(config.maxConnectionAgeMs), maxConnectionAgeGrace: formatDuration(config.maxConnectionAgeGraceMs) }),
  };
}
