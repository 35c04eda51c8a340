// A gRPC health check: a grpc.health.v1 Check over h2c (CONTRACT §13, §15; the app's or another container's): SERVING passes; every other answer, error or silence fails with a fixed reason.
import type * as Http2 from "node:http2";
import { formatDuration } from "../config/duration.js";
import { errorCode } from "../errors.js";
import { GRPC_CONTENT_TYPE, GRPC_STATUS, decodeGrpcMessage } from "../grpc/grpc-status.js";
import { HEALTH_CHECK_PATH, decodeHealthCheckResponse, encodeHealthCheckRequest, SERVING_STATUS, servingStatusName } from "../grpc/health-messages.js";
import { frameMessage, isFramingError, unframeUnary } from "../grpc/message-framing.js";
import { WireFormatError } from "../grpc/protobuf-wire.js";
import { VERSION } from "../version.js";
import type { HealthProbe, ProbeOutcome } from "./health-probe.js";

export interface GrpcHealthProbeOptions {
  /** `http://host:port` of the server asked. */
  readonly origin: string;
  /** The service asked for; `""` is the server as a whole. */
  readonly service: string;
  readonly timeoutMs: number;
}

/** A health answer is a few bytes; more than the HTTP check's 10 KB is not one (grpc's RESOURCE_EXHAUSTED). */
const MAX_ANSWER_BYTES = 10 * 1024;
const RESOURCE_EXHAUSTED = 8;

/**
 * The gRPC code a client library gives an HTTP status that is not 200 (grpc's
 * http-grpc-status-mapping: 400 INTERNAL, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404
 * UNIMPLEMENTED, 429/502/503/504 UNAVAILABLE, anything else UNKNOWN).
 */
function grpcCodeOfHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return GRPC_STATUS.INTERNAL;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return GRPC_STATUS.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_STATUS.UNAVAILABLE;
    default:
      return GRPC_STATUS.UNKNOWN;
  }
}

/**
 * node:http2, loaded at the first probe: never at start, and past the bundle's alias of
 * node:http2 (src/shims/http2-unused.ts, for undici), which an import would hit.
 */
function http2(): typeof Http2 {
  return process.getBuiltinModule("node:http2");
}

/** Probes one server's gRPC health over one kept-alive h2c session of its own, made again when it fails. */
export class GrpcHealthProbe implements HealthProbe {
  readonly #options: GrpcHealthProbeOptions;
  readonly #timeoutReason: string;
  readonly #body: Buffer;
  readonly #headers: Http2.OutgoingHttpHeaders;
  #session: Http2.ClientHttp2Session | undefined;
  /** The session's own error (a refused connect is told there, the stream only says cancelled). */
  #sessionError: Error | undefined;

  constructor(options: GrpcHealthProbeOptions) {
    this.#options = options;
    this.#timeoutReason = `timeout after ${formatDuration(options.timeoutMs)}`;
    this.#body = frameMessage(encodeHealthCheckRequest(options.service));
    this.#headers = {
      ":method": "POST",
      ":path": HEALTH_CHECK_PATH,
      "content-type": GRPC_CONTENT_TYPE,
      te: "trailers",
      // The app may give up when we do (gRPC's deadline header, in milliseconds).
      "grpc-timeout": `${options.timeoutMs}m`,
      "user-agent": `readiness-proxy/${VERSION}`,
    };
  }

  /** One Check. Never rejects, and settles within the timeout whatever the app or the connection does. */
  probe(): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
      let stream: Http2.ClientHttp2Stream | undefined;
      let settled = false;
      const settle = (outcome: ProbeOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const session = this.#currentSession();
      const timer = setTimeout(() => {
        settle({ ok: false, reason: this.#timeoutReason, err: "timed out" });
        // A hung app or a connect that never completes: the next probe starts on a new connection.
        stream?.close(http2().constants.NGHTTP2_CANCEL);
        this.#drop(session);
      }, this.#options.timeoutMs);
      try {
        stream = session.request(this.#headers);
      } catch (error) {
        this.#drop(session);
        settle(this.#connectionFailure(error));
        return;
      }
      new AnswerReader(stream, settle, () => this.#connectionFailure(this.#sessionError), this.#timeoutReason);
      // A stream that never started says ERR_HTTP2_STREAM_CANCEL, with the connect error as its cause.
      stream.on("error", (error: Error) => settle(this.#connectionFailure(error.cause instanceof Error ? error.cause : (this.#sessionError ?? error))));
      stream.end(this.#body);
    });
  }

  /** At the end of the drain. Destroyed, not closed: a close would wait for a connect to an app that never answers. */
  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    session?.destroy();
  }

  #currentSession(): Http2.ClientHttp2Session {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    this.#sessionError = undefined;
    const session = http2().connect(this.#options.origin);
    // Every error also reaches the stream that was waiting; this keeps the cause (ECONNREFUSED).
    session.on("error", (error) => {
      if (this.#session === session) this.#sessionError = error;
    });
    session.on("goaway", () => this.#forget(session));
    session.on("close", () => this.#forget(session));
    // The probe's connection never keeps the process alive: the listener does that.
    session.unref();
    this.#session = session;
    return session;
  }

  #forget(session: Http2.ClientHttp2Session): void {
    if (this.#session === session) this.#session = undefined;
  }

  #drop(session: Http2.ClientHttp2Session): void {
    this.#forget(session);
    session.destroy();
  }

  #connectionFailure(error: unknown): ProbeOutcome {
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : "stream closed before an answer";
    const reason = code === "ECONNREFUSED" ? "connection refused" : "connection failed";
    return { ok: false, reason, err: code === undefined ? message : `${code}: ${message}` };
  }
}

/** Reads one Check's answer: the head, at most 10 KB of body, the trailers; decides at the close. */
class AnswerReader {
  #status: number | undefined;
  #head: Http2.IncomingHttpHeaders | undefined;
  #trailers: Http2.IncomingHttpHeaders | undefined;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  readonly #timeoutReason: string;

  constructor(stream: Http2.ClientHttp2Stream, settle: (outcome: ProbeOutcome) => void, noAnswer: () => ProbeOutcome, timeoutReason: string) {
    this.#timeoutReason = timeoutReason;
    stream.on("response", (headers) => {
      this.#head = headers;
      this.#status = Number(headers[":status"]);
    });
    stream.on("data", (chunk: Buffer) => {
      this.#bytes += chunk.length;
      if (this.#bytes > MAX_ANSWER_BYTES) {
        settle(grpcFailure(RESOURCE_EXHAUSTED, `answer over ${MAX_ANSWER_BYTES} bytes`));
        stream.close(http2().constants.NGHTTP2_CANCEL);
        return;
      }
      this.#chunks.push(chunk);
    });
    stream.on("trailers", (trailers) => {
      this.#trailers = trailers;
    });
    stream.on("close", () => settle(this.#head === undefined ? noAnswer() : this.#outcome(stream.rstCode)));
  }

  #outcome(rstCode: number | undefined): ProbeOutcome {
    const status = this.#status ?? 0;
    if (status !== 200) return { ...grpcFailure(grpcCodeOfHttpStatus(status), `HTTP status ${status}`), status };
    // Trailers-only answers carry grpc-status in the head.
    const fields = this.#trailers ?? this.#head!;
    const grpcStatus = fields["grpc-status"];
    if (grpcStatus === undefined) {
      return grpcFailure(GRPC_STATUS.INTERNAL, rstCode ? `stream reset (${rstCode}) before its trailers` : "no grpc-status");
    }
    const code = Number(grpcStatus);
    const message = typeof fields["grpc-message"] === "string" ? decodeGrpcMessage(fields["grpc-message"]) : "";
    // The app gave up at the grpc-timeout we sent, a moment before our own timer: the same timeout.
    if (code === GRPC_STATUS.DEADLINE_EXCEEDED) return { ok: false, reason: this.#timeoutReason, err: `grpc-status 4: ${message}` };
    if (code === GRPC_STATUS.NOT_FOUND) return { ok: false, reason: "status SERVICE_UNKNOWN", err: `grpc-status 5: ${message}` };
    if (code !== GRPC_STATUS.OK) return grpcFailure(code, message);
    return servingOutcome(Buffer.concat(this.#chunks));
  }
}

/** The reason names the code (as ?verbose shows it); `err`, for the log only, what the app or the wire said beside it. */
function grpcFailure(code: number, detail: string): { readonly ok: false; readonly reason: string; readonly err?: string } {
  return { ok: false, reason: `grpc status ${code}`, ...(detail === "" ? {} : { err: detail }) };
}

/** grpc-status 0: the one message decides. */
function servingOutcome(body: Buffer): ProbeOutcome {
  const message = unframeUnary(body);
  if (isFramingError(message)) return grpcFailure(GRPC_STATUS.INTERNAL, `answer is not one message: ${message.message}`);
  let serving: number;
  try {
    serving = decodeHealthCheckResponse(message);
  } catch (error) {
    if (error instanceof WireFormatError) return grpcFailure(GRPC_STATUS.INTERNAL, `answer is not a HealthCheckResponse: ${error.message}`);
    throw error;
  }
  if (serving === SERVING_STATUS.SERVING) return { ok: true, status: 200 };
  // An enum value past SERVICE_UNKNOWN is one this proxy does not know: UNKNOWN to us.
  const name = servingStatusName(serving);
  return name === undefined ? { ok: false, reason: "status UNKNOWN", err: `serving status ${serving}` } : { ok: false, reason: `status ${name}` };
}
