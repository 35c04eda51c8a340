// An app that accepts TCP on 127.0.0.1 and never says a word (wedged, or not speaking the protocol): counts its connections and tells when each closes.
import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

export interface SilentApp {
  readonly port: number;
  readonly url: string;
  /** Connections accepted so far, ours from {@link settle} excluded. */
  accepted(): number;
  /** Resolves when the n-th accepted connection (from 0) has closed. */
  closed(index: number): Promise<void>;
  /**
   * Resolves once every connection begun before the call has been accepted: a probe of its own
   * goes through the same FIFO accept queue, so when it is accepted, they were too.
   */
  settle(): Promise<void>;
}

/** The probe's own source address (all of 127.0.0.0/8 is loopback): how the app tells it from the connections it counts. */
const PROBE_ADDRESS = "127.0.0.2";

export async function startSilentApp(t: Test): Promise<SilentApp> {
  const sockets: Socket[] = [];
  const closes: Array<Promise<void>> = [];
  let onProbe: (() => void) | undefined;
  const server = createServer((socket) => {
    socket.on("error", () => {});
    // Read and dropped, so that the peer's close is seen.
    socket.resume();
    if (socket.remoteAddress === PROBE_ADDRESS) {
      socket.destroy();
      onProbe?.();
      return;
    }
    sockets.push(socket);
    closes.push(new Promise((resolve) => socket.on("close", () => resolve())));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    accepted: () => sockets.length,
    closed: (index) => closes[index] ?? Promise.reject(new Error(`no connection ${index}`)),
    settle: () =>
      new Promise<void>((resolve) => {
        const probe = connect({ port, host: "127.0.0.1", localAddress: PROBE_ADDRESS });
        probe.on("error", () => {});
        onProbe = () => {
          onProbe = undefined;
          probe.destroy();
          resolve();
        };
      }),
  };
}
