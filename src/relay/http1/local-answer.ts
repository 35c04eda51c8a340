// A request the relay answers itself (the health paths): the answer is written whole, a body sent with it is read and dropped.
import type { ResponseWriter } from "../../http/response-writer.js";
import type { ClientConnection } from "./client-connection.js";
import type { Transaction } from "./transaction.js";
import { wholeAnswerWriter } from "./own-answer.js";
import type { RequestHead } from "./request-head.js";

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
