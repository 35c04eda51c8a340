// What the one exchange (exchange.ts) asks of its client's side, whatever the client speaks: http1/http1-client-side.ts (an HTTP/1.1 transaction), http2/h2-client-side.ts (an h2 stream).
import type { Socket } from "node:net";
import type { ErrorDetails } from "../http/error-response.js";
import type { AppSide } from "./app-side.js";
import type { ClientRequest, Forwarding } from "./forward-plan.js";
import type { RelayContext } from "./relay-context.js";
import type { RequestRecord } from "./request-record.js";
import type { DeadlineKind } from "./stream-deadlines.js";

/** What a client side holds of its exchange (exchange.ts): the parts it reads, the start it gives and the end it tells. Named here so that neither file needs the other's class. */
export interface ClientSideExchange {
  readonly context: RelayContext;
  readonly record: RequestRecord;
  readonly app: AppSide;
  /** The plan, once: refused, answered by us, or forwarded and admitted. */
  start(): void;
  /** Ended from outside (the client gone, a fault, a deadline, our own answer): it leaves the queue, or the app is let go. */
  release(): void;
}

/**
 * The client's side of one request: it decoded the client's head (`request`), it hears the
 * client's protocol (the body, the client gone) and tells the exchange, and it encodes for its
 * client whatever the app answers, in the one shape every app side gives (app-side.ts), or an
 * answer of our own.
 */
export interface ClientSide {
  readonly request: ClientRequest;
  readonly remoteAddress: string | undefined;
  /** Made with its exchange, which it tells of the client's body and end. */
  attach(exchange: ClientSideExchange): void;
  /** The request will be forwarded with `plan`, once admitted. */
  planned(plan: Forwarding): void;
  /** Waiting in the limiter's queue. */
  queued(): void;
  /** Admitted: just before the app side opens. */
  admitted(): void;
  /** `OPTIONS *`: the proxy's own 200. */
  answerServerOptions(): void;
  /** An answer of ours before any head (a refusal, an overload, the app failed before its head); `error` logged unless undefined. */
  answerOwn(status: number, error: Error | undefined, reason: string, details?: ErrorDetails): void;
  /** An app's 5xx replaced by the branded page (upstream-error-page.ts); its status was recorded with the app's head. */
  answerWithPage(status: number): void;
  interim(status: number, message: string, fields: readonly string[]): boolean;
  head(status: number, message: string, fields: readonly string[], ended: boolean): void;
  trailers(fields: readonly string[]): void;
  data(chunk: Buffer): boolean;
  end(): void;
  /** The app failed after its head: the client's answer must never look complete. */
  cut(): void;
  resumeBody(): void;
  pauseBody(): void;
  /** An HTTP/1.1 app switched to the WebSocket asked for (an HTTP/1.1 client's only), then the tunnel. */
  switchedProtocols(status: number, message: string, fields: readonly string[]): void;
  tunnel(upstream: Socket, rest: Buffer): void;
  endForDeadline(kind: DeadlineKind): void;
  /** A defect of ours in one of the exchange's calls. */
  fault(error: unknown): void;
}
