// `readiness-proxy drain | stop | maintenance on [--for <d>] | maintenance off | log-level <level> | status` (CONTRACT §14, §17): one request to the admin listener, for a preStop exec in an image with no shell or curl.
import { request } from "node:http";
import { formatListenAddress, parseAdminListen, type ListenAddress } from "../config/listen-address.js";
import { parseDurationOption } from "../config/option-values.js";
import { maintenanceDurationProblem } from "./maintenance.js";
import { LOG_LEVELS } from "../logger.js";
import { errorCode, EXIT_CODES, ReadinessProxyError, ERROR_CODES, usageError } from "../errors.js";

/** Where the command writes; tests capture it. */
export interface CommandOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

const ADMIN_ENV = "READINESS_PROXY_ADMIN_LISTEN";
/** A drain or a switch answers at once; a listener that takes longer is not one of ours. */
const ANSWER_TIMEOUT_MS = 10_000;

const USAGE = `Usage: readiness-proxy drain|stop|status [--admin-listen <host:port>]
       readiness-proxy maintenance on [--for <duration>] [--admin-listen <host:port>]
       readiness-proxy maintenance off [--admin-listen <host:port>]
       readiness-proxy log-level <level> [--admin-listen <host:port>]

Asks the running proxy's admin listener (--admin-listen, or ${ADMIN_ENV}):
  drain             begin the drain without stopping (POST /drain)
  stop              the whole shutdown, as SIGTERM runs it, then exit (POST /quitquitquit)
  maintenance on    fail the maintenance check, for --for <duration> or until off (POST /maintenance)
  maintenance off   pass it again (DELETE /maintenance)
  log-level <level> log at this level from now on: ${LOG_LEVELS.join(", ")} (PUT /log-level)
  status            readiness, drain, maintenance, checks and requests in flight (GET /status)
Prints the answer; exits 0 on 2xx, 1 when the listener cannot be reached or refuses, 2 on usage errors.
`;

/** One admin request: method and path. */
interface AdminRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly path: string;
}

/** Runs the command in `argv` (its first word is the command); resolves with the exit code. */
export async function runAdminCommand(argv: readonly string[], env: NodeJS.ProcessEnv, output: CommandOutput): Promise<number> {
  let parsed: { readonly address: ListenAddress; readonly request: AdminRequest } | "help";
  try {
    parsed = parseAdminCommand(argv, env);
  } catch (error) {
    if (error instanceof ReadinessProxyError && error.code === ERROR_CODES.usage) {
      output.writeErr(`error: ${error.message}\n`);
      return EXIT_CODES.usage;
    }
    throw error;
  }
  if (parsed === "help") {
    output.writeOut(USAGE);
    return EXIT_CODES.ok;
  }
  const where = formatListenAddress(parsed.address);
  try {
    const answer = await send(parsed.address, parsed.request);
    if (answer.status >= 200 && answer.status < 300) {
      output.writeOut(answer.body.endsWith("\n") ? answer.body : `${answer.body}\n`);
      return EXIT_CODES.ok;
    }
    output.writeErr(`error: admin listener at ${where} answered ${answer.status}: ${answer.body.trim()}\n`);
  } catch (error) {
    output.writeErr(`error: no admin listener at ${where}: ${describeFailure(error)}\n`);
  }
  return EXIT_CODES.runtime;
}

/** The words and options after the program's name -> the request, or a usage error naming what was wrong. */
export function parseAdminCommand(argv: readonly string[], env: NodeJS.ProcessEnv): { readonly address: ListenAddress; readonly request: AdminRequest } | "help" {
  const words: string[] = [];
  let addressText: string | undefined;
  let forText: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "-h" || arg === "--help") return "help";
    if (!arg.startsWith("-")) {
      words.push(arg);
      continue;
    }
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    // commander's wording, as for the daemon's own options.
    if (name !== "--admin-listen" && name !== "--for") throw new ReadinessProxyError(ERROR_CODES.usage, `unknown option '${name}'`, EXIT_CODES.usage);
    const value = inline ?? argv[++index];
    if (value === undefined) throw usageError(name, "expected a value after it");
    if (name === "--admin-listen") addressText = value;
    else forText = value;
  }
  const [command, sub, ...extra] = words;
  let adminRequest: AdminRequest;
  if (command === "maintenance" && (sub === "on" || sub === "off") && extra.length === 0) {
    if (sub === "off" && forText !== undefined) throw usageError("--for", "expected only with maintenance on", forText);
    const problem = forText === undefined ? undefined : maintenanceDurationProblem(parseDurationOption("--for", forText));
    if (problem !== undefined) throw usageError("--for", problem, forText);
    adminRequest = sub === "off" ? { method: "DELETE", path: "/maintenance" } : { method: "POST", path: forText === undefined ? "/maintenance" : `/maintenance?for=${encodeURIComponent(forText)}` };
  } else if ((command === "drain" || command === "stop" || command === "status") && sub === undefined) {
    if (forText !== undefined) throw usageError("--for", "expected only with maintenance on", forText);
    adminRequest = SIMPLE_REQUESTS[command];
  } else if (command === "log-level" && extra.length === 0) {
    if (forText !== undefined) throw usageError("--for", "expected only with maintenance on", forText);
    if (!LOG_LEVELS.some((level) => level === sub)) throw usageError("log-level", `expected one of ${LOG_LEVELS.join(", ")}`, sub ?? "");
    adminRequest = { method: "PUT", path: `/log-level?level=${sub}` };
  } else if (command === "maintenance") {
    throw usageError("maintenance", "expected on or off", words.slice(1).join(" "));
  } else if (command === "log-level") {
    throw usageError("log-level", `expected one of ${LOG_LEVELS.join(", ")}`, words.slice(1).join(" "));
  } else {
    throw usageError("readiness-proxy", "expected drain, stop, maintenance on|off, log-level <level> or status", words.join(" "));
  }
  const text = addressText ?? env[ADMIN_ENV];
  if (text === undefined || text === "") throw usageError("--admin-listen", `expected the admin listener's address (the flag or ${ADMIN_ENV}), like 127.0.0.1:9901`);
  const address = parseAdminListen(addressText === undefined ? ADMIN_ENV : "--admin-listen", text)!;
  return { address, request: adminRequest };
}

/** The commands that take no word after them. */
const SIMPLE_REQUESTS: Readonly<Record<"drain" | "stop" | "status", AdminRequest>> = {
  drain: { method: "POST", path: "/drain" },
  stop: { method: "POST", path: "/quitquitquit" },
  status: { method: "GET", path: "/status" },
};

function send(address: ListenAddress, adminRequest: AdminRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: address.host, port: address.port, method: adminRequest.method, path: adminRequest.path, agent: false, timeout: ANSWER_TIMEOUT_MS }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      response.on("error", reject);
    });
    outgoing.on("timeout", () => outgoing.destroy(Object.assign(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000}s`), { code: "ETIMEDOUT" })));
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/** `connection refused`, not `connect ECONNREFUSED 127.0.0.1:9901`: the address is in the line already. */
function describeFailure(error: unknown): string {
  switch (errorCode(error)) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset";
    case "ETIMEDOUT":
      return error instanceof Error ? error.message : "timeout";
    case "EADDRNOTAVAIL":
      return "address not available";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
