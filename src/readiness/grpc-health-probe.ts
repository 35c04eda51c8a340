// A gRPC health check: a grpc.health.v1 Check over h2c on the codec's client side (CONTRACT §13, §15; the app's or another container's): SERVING passes; every other answer, error or silence fails with a fixed reason.
import net, { type Socket } from "node:net";
import { formatDuration } from "../config/duration.js";
import { errorCode } from "../errors.js";
import { GRPC_CONTENT_TYPE, GRPC_STATUS, decodeGrpcMessage } from "../grpc/grpc-status.js";
import { HEALTH_CHECK_PATH, decodeHealthCheckResponse, encodeHealthCheckRequest, SERVING_STATUS, servingStatusName } from "../grpc/health-messages.js";
import { frameMessage, isFramingError, unframeUnary } from "../grpc/message-framing.js";
import { WireFormatError } from "../grpc/protobuf-wire.js";
import { VERSION } from "../version.js";
import { SYSTEM_TIMERS, type Timers } from "../timers.js";
import type { HealthProbe, ProbeOutcome } from "./health-probe.js";
import type { Endpoint } from "../config/upstream-url.js";
import type { H2Connection, H2ConnectionHandler } from "../h2-codec/h2-connection.js";
import { connectionOnSocket } from "../h2-codec/socket-binding.js";
import { fieldValue } from "../h2-codec/field-list.js";
import { H2_ERROR } from "../h2-codec/codec-error.js";

export interface GrpcHealthProbeOptions {
  /** The server asked: where to connect (a host and port, or `--upstream unix:`'s socket), and its `:authority`. */
  readonly endpoint: Endpoint;
  /** The service asked for; `""` is the server as a whole. */
  readonly service: string;
  readonly timeoutMs: number;
  /** The daemon's clock and timers, for the probe's timeout; the runtime's by default. */
  readonly timers?: Timers | undefined;
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

/** Probes one server's gRPC health over one kept-alive h2c connection of its own (the codec's client side), made again when it fails. */
export class GrpcHealthProbe implements HealthProbe {
  readonly #options: GrpcHealthProbeOptions;
  readonly #timeoutReason: string;
  readonly #body: Buffer;
  readonly #fields: readonly string[];
  #connection: H2Connection | undefined;
  #socket: Socket | undefined;
  /** The socket's own error (a refused connect is told there; the stream only hears the close). */
  #socketError: Error | undefined;

  constructor(options: GrpcHealthProbeOptions) {
    this.#options = options;
    this.#timeoutReason = `timeout after ${formatDuration(options.timeoutMs)}`;
    this.#body = frameMessage(encodeHealthCheckRequest(options.service));
    this.#fields = [
      ":method", "POST",
      ":scheme", "http",
      ":path", HEALTH_CHECK_PATH,
      ":authority", options.endpoint.authority,
      "content-type", GRPC_CONTENT_TYPE,
      "te", "trailers",
      // The app may give up when we do (gRPC's deadline header, in milliseconds).
      "grpc-timeout", `${options.timeoutMs}m`,
      "user-agent", `readiness-proxy/${VERSION}`,
    ];
  }

  /** One Check. Never rejects, and settles within the timeout whatever the app or the connection does. */
  probe(): Promise<ProbeOutcome> {
    const timers = this.#options.timers ?? SYSTEM_TIMERS;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: ProbeOutcome) => {
        if (settled) return;
        settled = true;
        timers.clearTimeout(timer);
        resolve(outcome);
      };
      const connection = this.#currentConnection();
      const socket = this.#socket;
      const timer = timers.setTimeout(() => {
        settle({ ok: false, reason: this.#timeoutReason, err: "timed out" });
        // A hung app or a connect that never completes: the next probe starts on a new connection.
        this.#drop(socket);
      }, this.#options.timeoutMs);
      const call = new CheckCall(settle, () => this.#connectionFailure(this.#socketError), this.#timeoutReason);
      const stream = connection.request(this.#fields, false, call);
      call.cancel = () => connection.reset(stream, H2_ERROR.CANCEL);
      connection.sendData(stream, this.#body, true);
    });
  }

  /** At the end of the drain: the connection is cut, not closed, as a connect may never complete. */
  async close(): Promise<void> {
    this.#drop(this.#socket);
  }

  #currentConnection(): H2Connection {
    const current = this.#connection;
    if (current !== undefined && current.canOpenStream) return current;
    this.#drop(this.#socket);
    this.#socketError = undefined;
    const { endpoint } = this.#options;
    const socket = endpoint.kind === "tcp" ? net.connect({ host: endpoint.host, port: endpoint.port }) : net.connect({ path: endpoint.path });
    // The probe's connection never keeps the process alive: the listener does that.
    socket.unref();
    if (endpoint.kind === "tcp") socket.setNoDelay(true);
    const connection = connectionOnSocket(socket, probeHandler(() => connection), { role: "client", clock: performance.now.bind(performance) }, (error) => {
      if (this.#socket === socket) this.#socketError = error;
    });
    socket.once("close", () => this.#forget(socket));
    this.#socket = socket;
    this.#connection = connection;
    return connection;
  }

  #forget(socket: Socket | undefined): void {
    if (socket === undefined || this.#socket !== socket) return;
    this.#socket = undefined;
    this.#connection = undefined;
  }

  #drop(socket: Socket | undefined): void {
    this.#forget(socket);
    socket?.destroy();
  }

  #connectionFailure(error: unknown): ProbeOutcome {
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : "stream closed before an answer";
    const reason = code === "ECONNREFUSED" ? "connection refused" : "connection failed";
    return { ok: false, reason, err: code === undefined ? message : `${code}: ${message}` };
  }
}

/** The probe's connection hands each stream's events to the Check it carries; body octets are consumed as they come (an answer is small). */
function probeHandler(connection: () => H2Connection): H2ConnectionHandler {
  return {
    onHead: (stream, fields, _neverIndexed, endStream) => (stream.user as CheckCall).head(fields, endStream),
    onOversizedHead: () => {},
    onData: (stream, source, start, end, endStream) => {
      connection().consume(stream, end - start);
      (stream.user as CheckCall).data(source.subarray(start, end), endStream);
    },
    onTrailers: (stream, fields) => (stream.user as CheckCall).trailers(fields),
    onReset: (stream, errorCode) => (stream.user as CheckCall).reset(errorCode),
    onStreamEnd: () => {},
    onWritable: () => {},
    onGoaway: () => {},
    onClose: () => {},
    onFault: () => {},
  };
}

/** One Check's answer: the head, at most 10 KB of body, the trailers; decided at the stream's end. */
class CheckCall {
  #status = 0;
  #head: readonly string[] | undefined;
  #trailers: readonly string[] | undefined;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  /** Resets the call's stream: an answer past its size is not read to its end. */
  cancel: () => void = () => {};

  constructor(
    private readonly settle: (outcome: ProbeOutcome) => void,
    private readonly noAnswer: () => ProbeOutcome,
    private readonly timeoutReason: string,
  ) {}

  head(fields: readonly string[], endStream: boolean): void {
    const status = Number(fieldValue(fields, ":status"));
    if (status >= 100 && status < 200) return;
    this.#head = [...fields];
    this.#status = status;
    if (endStream) this.settle(this.#outcome(0));
  }

  data(chunk: Buffer, endStream: boolean): void {
    this.#bytes += chunk.length;
    if (this.#bytes > MAX_ANSWER_BYTES) {
      this.settle(grpcFailure(RESOURCE_EXHAUSTED, `answer over ${MAX_ANSWER_BYTES} bytes`));
      return this.cancel();
    }
    // Copied: the view is into the socket's read, which the connection does not keep for us.
    this.#chunks.push(Buffer.from(chunk));
    if (endStream) this.settle(this.#outcome(0));
  }

  trailers(fields: readonly string[]): void {
    this.#trailers = [...fields];
    this.settle(this.#outcome(0));
  }

  reset(errorCode: number): void {
    this.settle(this.#head === undefined ? this.noAnswer() : this.#outcome(errorCode));
  }

  #outcome(rstCode: number): ProbeOutcome {
    const status = this.#status;
    if (status !== 200) return { ...grpcFailure(grpcCodeOfHttpStatus(status), `HTTP status ${status}`), status };
    // Trailers-only answers carry grpc-status in the head.
    const fields = this.#trailers ?? this.#head!;
    const grpcStatus = fieldValue(fields, "grpc-status");
    if (grpcStatus === undefined) {
      return grpcFailure(GRPC_STATUS.INTERNAL, rstCode ? `stream reset (${rstCode}) before its trailers` : "no grpc-status");
    }
    const code = Number(grpcStatus);
    const grpcMessage = fieldValue(fields, "grpc-message");
    const message = grpcMessage === undefined ? "" : decodeGrpcMessage(grpcMessage);
    // The app gave up at the grpc-timeout we sent, a moment before our own timer: the same timeout.
    if (code === GRPC_STATUS.DEADLINE_EXCEEDED) return { ok: false, reason: this.timeoutReason, err: `grpc-status 4: ${message}` };
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
