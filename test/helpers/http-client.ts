// A small real HTTP client for tests (node:http, no pooling), returning status, headers and the whole body.
import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";

export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly body: Buffer;
  text(): string;
  json(): unknown;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
}

/** One request on a fresh connection to 127.0.0.1:`port`. */
export function send(port: number, path: string, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body,
            text: () => body.toString("utf8"),
            json: () => JSON.parse(body.toString("utf8")) as unknown,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
