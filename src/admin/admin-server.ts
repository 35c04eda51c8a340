// The loopback admin listener (CONTRACT §14, §17): POST /drain, POST /quitquitquit, POST|DELETE /maintenance, PUT /log-level and GET /status; operator actions, never proxying. Loaded only with --admin-listen.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Level } from "pino";
import type { ListenAddress } from "../config/listen-address.js";
import { LOG_LEVELS } from "../logger.js";
import { parseDuration } from "../config/duration.js";
import { listen } from "../http/listen.js";
import type { AdminStatus } from "./status.js";
import { maintenanceDurationProblem, type MaintenanceMode } from "./maintenance.js";

/** What the admin listener acts on (the daemon wires them). */
export interface AdminActions {
  /** Begins the drain without stopping (idempotent). */
  drain(): void;
  /** The whole shutdown, as SIGTERM runs it, then the exit (idempotent). */
  stop(): void;
  /** Sets the log level of every line from now on, until the process ends. */
  setLogLevel(level: Level): void;
  readonly maintenance: MaintenanceMode;
  status(): Promise<AdminStatus>;
}

/** The listener; `start` opens it (a listen error rejects: exit 1 like the main listener's). */
export class AdminServer {
  readonly #server: Server;
  readonly #address: ListenAddress;

  constructor(address: ListenAddress, actions: AdminActions) {
    this.#address = address;
    this.#server = createServer((request, response) => {
      // A body is never needed: read and dropped, so the connection can be reused.
      request.resume();
      route(actions, request, response).catch((error: unknown) => answer(response, 500, { error: error instanceof Error ? error.message : String(error) }));
    });
  }

  start(): Promise<AddressInfo> {
    return listen(this.#server, this.#address, " (--admin-listen)");
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

async function route(actions: AdminActions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = targetUrl(request.url ?? "/");
  if (url === null) return answer(response, 400, { error: "bad request target" });
  const method = request.method ?? "GET";
  if (url.pathname === "/drain" && method === "POST") {
    actions.drain();
    return answer(response, 202, { draining: true });
  }
  if (url.pathname === "/quitquitquit" && method === "POST") {
    // Answered before the shutdown begins: the answer is out however short the drain is.
    answer(response, 202, { stopping: true });
    actions.stop();
    return;
  }
  if (url.pathname === "/log-level" && method === "PUT") {
    const text = url.searchParams.get("level");
    const level = LOG_LEVELS.find((candidate) => candidate === text);
    if (level === undefined) return answer(response, 400, { error: `level: expected one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(text ?? "")}` });
    actions.setLogLevel(level);
    return answer(response, 200, { level });
  }
  if (url.pathname === "/maintenance" && method === "POST") {
    const text = url.searchParams.get("for");
    const forMs = text === null ? undefined : parseDuration(text);
    const problem = text === null ? undefined : maintenanceDurationProblem(forMs);
    if (problem !== undefined) return answer(response, 400, { error: `for: ${problem}, got ${JSON.stringify(text)}` });
    actions.maintenance.turnOn(forMs);
    return answer(response, 200, { maintenance: true, until: actions.maintenance.until });
  }
  if (url.pathname === "/maintenance" && method === "DELETE") {
    actions.maintenance.turnOff();
    return answer(response, 200, { maintenance: false });
  }
  if (url.pathname === "/status" && (method === "GET" || method === "HEAD")) return answer(response, 200, await actions.status());
  answer(response, 404, { error: "not found" });
}

/**
 * The request target as a URL, or null when it is none (RFC 9112 §3.2). An origin-form target is
 * read under a fixed origin, so `//` stays a path (not a scheme-relative URL, which the URL
 * parser refuses); anything else (absolute-form, `*`, junk) goes to the parser as it is.
 */
function targetUrl(target: string): URL | null {
  return URL.parse(target.charCodeAt(0) === 0x2f /* "/" */ ? `http://admin${target}` : target);
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
  response.end(text);
}
