// A request the relay answers itself over HTTP/1.1 (the health paths, HTTP/1.1's own refusals): the answer is written whole, a body sent with it is read and dropped.
import type { ResponseWriter } from "../../http/response-writer.js";
import type { ClientConnection } from "./client-connection.js";
import type { Transaction } from "./transaction.js";
import { wholeAnswerWriter } from "./own-answer.js";
import type { RequestHead } from "./request-head.js";
import { relaysTransferCoding } from "../forward-plan.js";

/** Writes the whole answer to `request` through `writer`. */
export type LocalAnswerer = (request: RequestHead, writer: ResponseWriter, connection: ClientConnection) => void;

/** Runs `answer` with a writer when its turn comes; never reaches the upstream. */
export class LocalAnswer implements Transaction {
  readonly #client: ClientConnection;
  readonly #request: RequestHead;
  readonly #answer: LocalAnswerer;

  constructor(client: ClientConnection, request: RequestHead, answer: LocalAnswerer) {
    this.#client = client;
    this.#request = request;
    this.#answer = answer;
  }

  start(): void {
    this.#answer(this.#request, wholeAnswerWriter(this.#client, this.#request, this), this.#client);
  }

  onRequestBody(): void {}

  onRequestEnd(): void {}

  onClientDrain(): void {}

  onClientGone(): void {}

  /** Holds nothing to release; a health answer cut by a defect gets no answer of ours (the prober sees a failure either way). */
  abandon(): boolean {
    return false;
  }
}

const EMPTY = Buffer.alloc(0);

function refuseHost(_request: RequestHead, writer: ResponseWriter, connection: ClientConnection): void {
  connection.closeAfterAnswer();
  writer.send(400, ["content-length", "0"], EMPTY);
}

/** node:http's continueExpression. */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i;

function refuseExpectation(_request: RequestHead, writer: ResponseWriter): void {
  writer.send(417, ["content-length", "0"], EMPTY);
}

function refuseVersion(_request: RequestHead, writer: ResponseWriter, connection: ClientConnection): void {
  connection.closeAfterAnswer();
  writer.send(505, ["content-length", "0"], EMPTY);
}

/** {@link http1Refusal}'s answer for a coding the relay cannot pass on: the exchange refuses it (501, then the close). */
export const CODING_REFUSED = "coding refused";

/**
 * HTTP/1.1's own refusals, judged before any route (h2's equivalents are the codec's stream
 * errors): the answer that replaces every route, CODING_REFUSED, or undefined when there is none.
 */
export function http1Refusal(request: RequestHead): LocalAnswerer | typeof CODING_REFUSED | undefined {
  // Only HTTP/1.x is relayed: llhttp reads 0.9 and 2.0 request lines, which must not go upstream as 1.1.
  if (request.versionMajor !== 1) return refuseVersion;
  // RFC 9112 §3.2: an HTTP/1.1 request names its Host exactly once (node:http's requireHostHeader
  // covers the missing one); with two, the app and we could disagree on which is meant.
  const hosts = request.count("host");
  if (hosts > 1 || (hosts === 0 && request.versionMinor === 1)) return refuseHost;
  // A coding we cannot relay goes to the exchange, which refuses it (501, then the close) before
  // anything else is judged: a 417 or a health answer would keep such a connection reading on.
  if (!relaysTransferCoding(request)) return CODING_REFUSED;
  // node:http's rule, before anything else is looked at: an HTTP/1.1 expectation other than
  // 100-continue is a 417 (the connection stays open), for the health paths too; node:http
  // hands upgrades and CONNECT to their own events, where no expectation is looked at.
  if (request.versionMinor === 1 && !request.upgrade) {
    const expectation = request.joined("expect");
    if (expectation !== undefined && !CONTINUE_EXPECTATION.test(expectation)) return refuseExpectation;
  }
  return undefined;
}
