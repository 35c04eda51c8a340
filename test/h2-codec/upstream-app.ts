// The upstream differential's fake app on 127.0.0.1: each connection reads the client's preface, SETTINGS and request heads, then writes one case's server bytes in pieces, a marker PING last, and reads what the client sends back.
import net from "node:net";
import { once } from "node:events";
import { FLAG, FRAME, PREFACE } from "../relay/http2/h2-frames.js";
import { MARKER_PING, readAnswer, writePieces, type Answer } from "./session-client.js";

/** One connection's case: the bytes to write once `requests` request heads have come, and how long it may last. */
interface PendingCase {
  pieces: readonly Buffer[];
  requests: number;
  boundMs: number;
  settle: (answer: Answer) => void;
  fail: (error: unknown) => void;
}

export class ScriptedApp {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #pending: PendingCase | undefined;

  private constructor(server: net.Server) {
    this.#server = server;
    server.on("connection", (socket) => {
      // #serve takes the pending case at once; a throw while serving it fails that case's promise.
      const pending = this.#pending;
      this.#serve(socket).catch((error: unknown) => (socket.destroy(), pending?.fail(error)));
    });
  }

  static async start(): Promise<ScriptedApp> {
    const app = new ScriptedApp(net.createServer());
    app.#server.listen(0, "127.0.0.1");
    await once(app.#server, "listening");
    return app;
  }

  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  /**
   * The next connection gets this case; the promise settles with what its client sent back (its
   * RST_STREAMs, GOAWAY, and whether it acknowledged the marker or closed). One client at a time.
   */
  expect(pieces: readonly Buffer[], requests: number, boundMs: number): Promise<Answer> {
    return new Promise((settle, fail) => (this.#pending = { pieces, requests, boundMs, settle, fail }));
  }

  /** Ends every connection still open (the client's, once the case is read) and the listener. */
  dropConnections(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  close(): Promise<void> {
    this.dropConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  async #serve(socket: net.Socket): Promise<void> {
    this.#sockets.add(socket);
    socket.on("close", () => this.#sockets.delete(socket));
    socket.on("error", () => {});
    socket.setNoDelay(true);
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending === undefined) return void socket.destroy();
    const answer: Answer = { resets: new Map(), responses: new Map(), goaway: undefined, goawayLastStreamId: 0, end: "bound", clientPort: socket.remotePort ?? 0 };
    let heads = 0;
    let requested!: () => void;
    const allRequested = new Promise<void>((resolve) => (requested = resolve));
    const done = readAnswer(
      socket,
      answer,
      pending.boundMs,
      (received) => {
        // A request head (the clients' are one frame each); once all have come, the app answers.
        if (received.type === FRAME.HEADERS && (received.flags & FLAG.END_HEADERS) !== 0 && ++heads === pending.requests) requested();
      },
      PREFACE.length,
    );
    await Promise.race([allRequested, done]);
    if (heads === pending.requests) await writePieces(socket, [...pending.pieces, MARKER_PING]);
    await done;
    pending.settle(answer);
  }
}
