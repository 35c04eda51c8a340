// A slow app for overload tests: node:http on 127.0.0.1:0 that holds every request until the test releases it, and counts how many it holds at once.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { Test } from "tap";
import { serveOnLoopback } from "./upstream.js";

/** One request the app has received and not yet answered (unless released). */
export interface HeldRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** For a stream: write the head and events before release(). */
  readonly res: ServerResponse;
  /** Resolves when the proxy closed this request before it was released (its client went away, or a cut). */
  readonly aborted: Promise<void>;
  /** Ends the response with `body` (200 unless a head was written); the app counts it out first. */
  release(body?: string): void;
}

export interface GatedUpstream {
  readonly port: number;
  readonly url: string;
  /** For an 'upgrade' listener of the test's own. */
  readonly server: Server;
  /** Every request, in the order the app received them. */
  readonly arrived: HeldRequest[];
  /** Requests the app holds now. */
  readonly inApp: number;
  /** The most it ever held at once. */
  readonly mostInApp: number;
  /** Resolves once `count` requests have arrived in all. */
  arrivals(count: number): Promise<HeldRequest[]>;
}

export async function startGatedUpstream(t: Test): Promise<GatedUpstream> {
  const arrived: HeldRequest[] = [];
  const waiting: Array<{ count: number; resolve: (held: HeldRequest[]) => void }> = [];
  let inApp = 0;
  let mostInApp = 0;
  const server = createServer((req, res) => {
    inApp++;
    mostInApp = Math.max(mostInApp, inApp);
    let answered = false;
    // Counted out when the app decides to answer, before res.end(): the proxy can learn of the end
    // only after it, so a slot it frees can never make the app count one request too many.
    const countOut = () => {
      if (answered) return false;
      answered = true;
      inApp--;
      return true;
    };
    const aborted = new Promise<void>((resolve) => res.once("close", () => countOut() && resolve()));
    req.resume();
    arrived.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      res,
      aborted,
      release: (body = "ok") => {
        if (countOut()) res.end(body);
      },
    });
    for (const waiter of waiting.filter((entry) => arrived.length >= entry.count)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(arrived.slice());
    }
  });
  const port = await serveOnLoopback(t, server);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    server,
    arrived,
    get inApp() {
      return inApp;
    },
    get mostInApp() {
      return mostInApp;
    },
    arrivals: (count) =>
      new Promise((resolve) => {
        if (arrived.length >= count) resolve(arrived.slice());
        else waiting.push({ count, resolve });
      }),
  };
}
