// One HTTP/1.1 request to an HTTP/1.1 app: the client's side in http1-client-exchange.ts, the app's in http1-app-side.ts; here the head is planned, the app's heads relayed as they are, and a WebSocket becomes a tunnel.
import type { Socket } from "node:net";
import type { RelayContext } from "../relay-context.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { responseFramingFor } from "./body-framing.js";
import type { ClientConnection } from "./client-connection.js";
import { planForward } from "./forward-plan.js";
import { Http1AppSide, type Http1AppUser, type Http1SendRules } from "./http1-app-side.js";
import { Http1ClientExchange } from "./http1-client-exchange.js";
import { BODY, type BodyDirective, type ParsedHead } from "./llhttp-binding.js";
import type { RequestHead } from "./request-head.js";
import { relayInterimHead, switchingProtocolsHead } from "./interim-responses.js";
import { relayedResponseHead, upstreamHeaderFacts } from "./response-head.js";
import { openTunnel } from "./tunnel.js";
import type { ReadEndWaiter } from "./upstream-connection.js";
import type { UpstreamPool } from "./upstream-pool.js";

/** An HTTP/1.1 client's body is checked by llhttp as it is read, so its last byte goes as it comes; an idempotent request may go again. */
const HTTP1_CLIENT_RULES: Http1SendRules = { mayResend: true, holdLastByte: false };

/**
 * Head and body of a small answer go as one buffer of this size at most, a slice of Node's
 * shared pool (below 4 KiB): copying a few hundred body bytes costs less than a cork's buffered
 * entries and its writev. A larger body goes as it is, behind the head, corked.
 */
const ONE_WRITE_BYTES = 4096;

/** `head` and `body` in one buffer. */
function joined(head: Buffer, body: Buffer): Buffer {
  const both = Buffer.allocUnsafe(head.length + body.length);
  head.copy(both, 0);
  body.copy(both, head.length);
  return both;
}

/** One request/response through the relay; methods on the prototype, one object per request. */
export class Exchange extends Http1ClientExchange implements Http1AppUser, ReadEndWaiter {
  protected readonly app: Http1AppSide;
  /** Set while a WebSocket tunnel is open: what ends it. */
  #cutTunnel: (() => void) | undefined;
  /** The answer's head, held until its first body bytes or the end of the app's read that brought it (see head). */
  #heldHead: Buffer | undefined;

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientConnection, request: RequestHead) {
    super(context, client, request);
    this.app = new Http1AppSide(context, pool, request, this.record, HTTP1_CLIENT_RULES, this);
  }

  start(): void {
    const plan = planForward(this.request, this.context, this.client.remoteAddress);
    if (plan.kind === "server options") {
      this.send(200, ["content-length", "0"], Buffer.alloc(0));
      return;
    }
    if (plan.kind === "refuse") {
      this.failBeforeHead(plan.status, new Error(plan.detail), plan.reason);
      return;
    }
    this.app.forward(plan.head, plan.upgrade);
    this.expectsContinue = plan.expectsContinue;
    // The connection is closed after a refused upgrade: what follows must never reach the app raw.
    if (plan.upgrade !== undefined) this.client.closeAfterAnswer();
    this.admit();
  }

  interim(head: ParsedHead): boolean {
    return relayInterimHead(this.client, this.request, head);
  }

  switchedProtocols(head: ParsedHead): void {
    this.client.write(switchingProtocolsHead(head));
  }

  head(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    const client = this.client;
    const method = this.request.method;
    const facts = upstreamHeaderFacts(head.headers);
    this.responseFraming = responseFramingFor(method, status, facts.hasContentLength, this.request.versionMinor);
    if (this.responseFraming === "close") client.closeAfterAnswer();
    const octets = relayedResponseHead(status, head.statusMessage, head.headers, facts, this.responseFraming, client.keepAlive);
    // A chunked answer's pieces are three writes each: corked until the read ends, as before.
    if (this.responseFraming !== "chunked" && this.app.holdUntilReadEnds(this)) this.#heldHead = octets;
    else {
      this.app.corkClientUntilReadEnds(client.socket);
      client.write(octets);
    }
    return method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** The app's read that brought the head has been parsed: a head still held (no body in that read) goes now. */
  readEnded(): void {
    this.#writeHeldHead();
  }

  /** The first body bytes: with a head held, one write for both when they are small, else the head corked before them. */
  override data(chunk: Buffer): boolean {
    const held = this.#heldHead;
    if (held !== undefined && !this.done && this.responseFraming !== "none") {
      this.#heldHead = undefined;
      const socket = this.client.socket;
      if (held.length + chunk.length <= ONE_WRITE_BYTES) {
        this.record.bodySent(chunk.length);
        return socket.write(joined(held, chunk));
      }
      this.app.corkClientUntilReadEnds(socket);
      socket.write(held);
    }
    return super.data(chunk);
  }

  override end(): void {
    this.#writeHeldHead();
    super.end();
  }

  #writeHeldHead(): void {
    const held = this.#heldHead;
    if (held === undefined) return;
    this.#heldHead = undefined;
    if (!this.done && !this.client.socket.destroyed) this.client.write(held);
  }

  /** A WebSocket is open: no longer in flight, but it holds its concurrency slot until it closes. */
  tunnel(upstreamSocket: Socket, rest: Buffer): void {
    this.done = true;
    this.record.ended();
    this.record.tunnelOpened();
    const clientRest = this.client.detach();
    const record = this.record;
    this.#cutTunnel = openTunnel(this.client.socket, upstreamSocket, clientRest, rest, this.context.observer, () => record.finished(false), this.context.reportFault, this.context.deadlines && record);
  }

  /** A tunnel's deadline closes both its sockets; an exchange's is the client side's rule. */
  override endForDeadline(kind: DeadlineKind): void {
    if (this.#cutTunnel !== undefined) return this.#cutTunnel();
    super.endForDeadline(kind);
  }
}
