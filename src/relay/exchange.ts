// One request through the relay, whatever its client and its app speak: the client's side (client-side.ts) and the app's (app-side.ts) over one plan (forward-plan.ts), admission, the record, and what the app tells handed to the client's side.
import type { Socket } from "node:net";
import type { QueuedRequest } from "../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "./admission.js";
import type { AppSide } from "./app-side.js";
import { clientAddressOf } from "./client-address.js";
import type { ClientSide } from "./client-side.js";
import { faultAt } from "./fault-injection.js";
import { planForward } from "./forward-plan.js";
import { Http1AppSide, sendRulesFor, type Http1AppUser } from "./http1/http1-app-side.js";
import type { ParsedHead } from "./http1/llhttp-binding.js";
import type { UpstreamPool } from "./http1/upstream-pool.js";
import { H2cAppSide } from "./http2/h2c-app-side.js";
import { H2cPool } from "./http2/h2c-pool.js";
import type { RelayContext } from "./relay-context.js";
import { RequestRecord, type DeadlineTarget } from "./request-record.js";
import type { DeadlineKind } from "./stream-deadlines.js";

/** One per request; methods on the prototype. Every pairing of protocols is this one class: the sides encode and decode. */
export class Exchange implements Http1AppUser, AdmissionCandidate, DeadlineTarget {
  readonly context: RelayContext;
  readonly client: ClientSide;
  readonly record: RequestRecord;
  readonly app: AppSide;
  #queued: QueuedRequest | undefined;

  /** `pool`: the app's, HTTP/1.1 connections or h2c sessions; it says which app side the request takes. */
  constructor(context: RelayContext, client: ClientSide, pool: UpstreamPool | H2cPool) {
    this.context = context;
    this.client = client;
    const request = client.request;
    this.record = new RequestRecord(context, request, client.remoteAddress, request.protocol);
    this.app = pool instanceof H2cPool ? new H2cAppSide(context, pool, request, this.record, this) : new Http1AppSide(context, pool, request, this.record, sendRulesFor(request.protocol), this);
    client.attach(this);
  }

  /** The plan, once: refused, answered by us, or forwarded and admitted. */
  start(): void {
    const client = this.client;
    const plan = planForward(client.request, this.context);
    if (plan.kind === "server options") return client.answerServerOptions();
    if (plan.kind === "refuse") return client.answerOwn(plan.status, new Error(plan.detail), plan.reason);
    this.app.forward(plan, clientAddressOf(client.remoteAddress));
    client.planned(plan);
    this.#queued = requestAdmission(this.context, this);
    if (this.#queued !== undefined) client.queued();
  }

  /**
   * A slot is ours (at once, or after `waitedMs` in the queue): the request goes to the app.
   * The limiter calls this from another request's release or its queue timer: a fault here is
   * this request's, and must not break the limiter's loop.
   */
  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    // First: the slot is this request's to release, whatever fails after.
    this.record.admitted(waitedMs !== undefined, waitedMs, this);
    try {
      faultAt("limiter admit");
      this.client.admitted();
      this.app.open();
    } catch (error) {
      this.client.fault(error);
    }
  }

  /** The queue's wait ran out (or the drain's did): the app never sees the request. */
  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    try {
      this.refuseOverloaded("queue timeout", waitedMs);
    } catch (error) {
      this.client.fault(error);
    }
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.context, this.record, this.client.request, reason, waitedMs);
    this.client.answerOwn(503, undefined, "overloaded", OVERLOADED);
  }

  /** Ended from outside (the client gone, a fault, a deadline, our own answer): it leaves the queue, or the app is let go mid-exchange. */
  release(): void {
    if (this.#queued !== undefined) this.record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.app.cancel();
  }

  endForDeadline(kind: DeadlineKind): void {
    this.client.endForDeadline(kind);
  }

  // ---- what the app side tells (AppUser), handed to the client's side to encode ----

  interim(status: number, message: string, fields: readonly string[]): boolean {
    return this.client.interim(status, message, fields);
  }

  head(status: number, message: string, fields: readonly string[], ended: boolean): void {
    this.client.head(status, message, fields, ended);
  }

  trailers(fields: readonly string[]): void {
    this.client.trailers(fields);
  }

  data(chunk: Buffer): boolean {
    return this.client.data(chunk);
  }

  end(): void {
    this.client.end();
  }

  interceptError(status: number): void {
    this.client.answerWithPage(status);
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.client.answerOwn(status, error, reason);
  }

  answerCut(): void {
    this.client.cut();
  }

  resumeBody(): void {
    this.client.resumeBody();
  }

  pauseBody(): void {
    this.client.pauseBody();
  }

  switchedProtocols(head: ParsedHead): void {
    this.client.switchedProtocols(head.statusCode, head.statusMessage, head.headers);
  }

  tunnel(upstream: Socket, rest: Buffer): void {
    this.client.tunnel(upstream, rest);
  }

  fault(error: unknown): void {
    this.client.fault(error);
  }
}
