// GET /app-health (CONTRACT §17): the app's own health path asked on a connection of its own, for a livenessProbe that no queue or pool can hold; the app's status and at most 10 KiB of its body, or 502.
import type { ClientRequest, IncomingMessage } from "node:http";
import { VERSION } from "../version.js";
import type { ResponseWriter } from "./response-writer.js";

export interface AppHealthOptions {
  /** `http://host:port`: the upstream's origin (its path prefix is not applied, as for the upstream check). */
  readonly origin: string;
  /** The app's health path (--app-health-path, else --readiness-upstream-path). */
  readonly path: string;
  /** --readiness-upstream-timeout: the whole exchange, connect included. */
  readonly timeoutMs: number;
  /** The app's unix socket (--upstream unix:<path>): connected to instead of the origin's host and port. */
  readonly socketPath?: string | undefined;
}

/** The kubelet reads at most 10 KiB of a probe's body; so much of the app's is passed on. */
export const MAX_APP_HEALTH_BODY_BYTES = 10 * 1024;

const UNAVAILABLE = Buffer.from('{"error":"app health unavailable"}');
const UNAVAILABLE_HEADERS = ["content-type", "application/json", "cache-control", "no-store", "content-length", String(UNAVAILABLE.length)];

/**
 * Asks the app once per request. A connection of its own each time (no agent): a pool's
 * connection busy with a slow proxied request, or the limiter's queue, must never make a
 * healthy app look dead to the kubelet, which would restart it.
 */
export class AppHealth {
  readonly #options: AppHealthOptions;
  readonly #headers: Record<string, string>;
  /** node:http, loaded at the first /app-health: the relay never uses it, and a start without the route pays nothing. */
  #http: typeof import("node:http") | undefined;

  constructor(options: AppHealthOptions) {
    this.#options = options;
    this.#headers = { "user-agent": `readiness-proxy/${VERSION}`, accept: "*/*" };
  }

  /** Answers one `/app-health` request through `writer`; never throws, always answers within the timeout. */
  answer(writer: ResponseWriter): void {
    // getBuiltinModule, not import(): the single binary cannot import() a built-in at run time.
    this.#http ??= process.getBuiltinModule("node:http");
    this.#ask(this.#http, writer);
  }

  #ask(http: typeof import("node:http"), writer: ResponseWriter): void {
    const { origin, path, timeoutMs, socketPath } = this.#options;
    let answered = false;
    let outgoing: ClientRequest | undefined;
    const finish = (status: number, headers: readonly string[], body: Buffer) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      // The rest of a long body, or a hung one, is not ours to wait for.
      outgoing?.destroy();
      writer.send(status, headers, body);
    };
    const unavailable = () => finish(502, UNAVAILABLE_HEADERS, UNAVAILABLE);
    const timer = setTimeout(unavailable, timeoutMs);
    try {
      outgoing = http.request(`${origin}${path}`, { method: "GET", agent: false, headers: this.#headers, ...(socketPath !== undefined && { socketPath }) }, (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        const done = () => {
          const body = Buffer.concat(chunks, Math.min(bytes, MAX_APP_HEALTH_BODY_BYTES)).subarray(0, MAX_APP_HEALTH_BODY_BYTES);
          const contentType = response.headers["content-type"];
          finish(response.statusCode ?? 502, [...(contentType === undefined ? [] : ["content-type", contentType]), "cache-control", "no-store", "content-length", String(body.length)], body);
        };
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          bytes += chunk.length;
          if (bytes >= MAX_APP_HEALTH_BODY_BYTES) done();
        });
        response.on("end", done);
        // Cut after its head: what arrived is not known to be the whole answer.
        response.on("error", unavailable);
        response.on("aborted", unavailable);
      });
      outgoing.on("error", unavailable);
      outgoing.end();
    } catch {
      unavailable();
    }
  }
}
