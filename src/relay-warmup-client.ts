// The warm-up's HTTP/1.1 client: GETs written as octets over a keep-alive connection, one in flight, the connection replaced every so many, as a client's traffic does.
import { connect, type Socket } from "node:net";
import type { HealthProbe, ProbeOutcome } from "./readiness/health-probe.js";

/** The head a typical client sends (wrk's, curl's, a load balancer's): a Host and a couple of fields. */
const REQUEST = Buffer.from("GET /warm-up HTTP/1.1\r\nHost: warm-up\r\nUser-Agent: warm-up\r\nAccept: */*\r\n\r\n", "latin1");
/** Each answer of the warm-up's app ends its head and then its 4-octet body, `warm`. */
const ANSWER_END = "\r\n\r\nwarm";
const OK: ProbeOutcome = { ok: true, status: 200 };

export interface WarmUpHttp1ClientOptions {
  readonly port: number;
  /** Requests over one connection before it is closed and another opened (the accept and close paths warm too). */
  readonly requestsPerConnection: number;
  readonly timeoutMs: number;
}

/**
 * Costs the warm-up little per exchange (no HTTP client library in the way), so more of the
 * relay's own exchanges fit in the time before the app listens. Never rejects.
 */
export class WarmUpHttp1Client implements HealthProbe {
  readonly #options: WarmUpHttp1ClientOptions;
  #socket: Socket | undefined;
  #sent = 0;
  /** The last octets read, in case ANSWER_END is split across reads. */
  #tail = "";
  #settle: ((outcome: ProbeOutcome) => void) | undefined;

  constructor(options: WarmUpHttp1ClientOptions) {
    this.#options = options;
  }

  probe(): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#fail("timeout"), this.#options.timeoutMs);
      this.#settle = (outcome) => {
        clearTimeout(timer);
        this.#settle = undefined;
        resolve(outcome);
      };
      if (this.#socket !== undefined && this.#sent < this.#options.requestsPerConnection) {
        this.#send();
        return;
      }
      this.#socket?.destroy();
      this.#open();
    });
  }

  async close(): Promise<void> {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #open(): void {
    const socket = connect({ host: "127.0.0.1", port: this.#options.port, noDelay: true });
    this.#socket = socket;
    this.#sent = 0;
    this.#tail = "";
    socket.once("connect", () => this.#send());
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", (error) => {
      if (this.#socket === socket) this.#fail(error.message);
    });
    socket.on("close", () => {
      if (this.#socket === socket) this.#fail("closed");
    });
  }

  #send(): void {
    this.#sent++;
    this.#socket!.write(REQUEST);
  }

  #read(chunk: Buffer): void {
    const text = this.#tail + chunk.toString("latin1");
    if (text.includes(ANSWER_END)) {
      this.#tail = "";
      this.#settle?.(OK);
      return;
    }
    this.#tail = text.slice(-(ANSWER_END.length - 1));
  }

  #fail(reason: string): void {
    this.#socket?.destroy();
    this.#socket = undefined;
    this.#settle?.({ ok: false, reason });
  }
}
