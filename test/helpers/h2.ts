// HTTP/2 peers for tests: an h2c app on 127.0.0.1:0 with a per-test stream handler, and a small client that collects one answer whole.
import http2, { type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

export interface H2Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface H2Upstream {
  readonly port: number;
  readonly url: string;
  readonly received: H2Received[];
  /** Streams the app has seen opened (counted at HEADERS, before any body). */
  readonly opened: number;
  /** Replaces how streams are answered (the default: 200 "ok" once the body is read). */
  handle(handler: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void): void;
}

/** An h2c app (node:http2) closed when `t` ends. */
export async function startH2Upstream(t: Test, settings: http2.Settings = {}): Promise<H2Upstream> {
  const received: H2Received[] = [];
  let opened = 0;
  let handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      // node ends the readable side of a reset stream too, after 'aborted': that request never came whole.
      if (stream.aborted) return;
      received.push({ headers, body: Buffer.concat(chunks) });
      if (stream.destroyed) return;
      stream.respond({ ":status": 200, "content-type": "text/plain" });
      stream.end("ok");
    });
  };
  const server = http2.createServer({ settings });
  server.on("stream", (stream, headers) => {
    opened++;
    stream.on("error", () => {});
    handler(stream, headers);
  });
  server.on("sessionError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  t.teardown(() => {
    for (const session of sessions) session.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    get opened() {
      return opened;
    },
    handle(next) {
      handler = next;
    },
  };
}

export interface H2Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly trailers: IncomingHttpHeaders | undefined;
  /** The stream's RST_STREAM code (0 when it ended cleanly). */
  readonly rstCode: number;
}

/** An h2c session to the proxy (prior knowledge), closed when `t` ends. */
export function h2Connect(t: Test, port: number, options: http2.ClientSessionOptions = {}): ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`, options);
  session.on("error", () => {});
  t.teardown(() => session.destroy());
  return session;
}

/** One request on `session`, its answer collected whole. */
export function h2Request(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<H2Answer> {
  return new Promise((resolve) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      responseHeaders = received;
      status = Number(received[":status"]);
    });
    stream.on("trailers", (received) => (trailers = received));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("close", () => resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks), trailers, rstCode: stream.rstCode ?? 0 }));
    if (body !== undefined) stream.end(body);
  });
}

/**
 * An h2c app that refuses each path the first time it comes, as RFC 9113 §8.7 allows for a
 * stream it did not process: REFUSED_STREAM, or (a path with "goaway" in it) a GOAWAY whose last
 * stream id is below the stream. A path with "big" in it is refused only once more than 100,000
 * bytes of its body came (more than the proxy keeps to send again). "/first" is answered at
 * once. An answer says `<path>: <n> bytes` of the body received. `seen`: every stream's path.
 */
export async function startRefusingH2App(t: Test): Promise<{ url: string; seen: string[] }> {
  const app = await startH2Upstream(t);
  const seen: string[] = [];
  app.handle((stream, headers) => {
    const path = String(headers[":path"]);
    seen.push(path);
    if (path.includes("big")) {
      let received = 0;
      stream.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > 100_000 && !stream.closed) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      });
      return;
    }
    if (path !== "/first" && seen.filter((one) => one === path).length === 1) {
      if (path.includes("goaway")) stream.session!.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id! - 2);
      else stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      stream.respond({ ":status": 200 });
      stream.end(`${path}: ${Buffer.concat(chunks).length} bytes`);
    });
  });
  return { url: app.url, seen };
}
