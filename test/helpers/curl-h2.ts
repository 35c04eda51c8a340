// curl with --http2-prior-knowledge as a real h2c client: one request, its status, headers and body.
import { execFile } from "node:child_process";

export interface CurlAnswer {
  readonly status: number;
  /** The response's fields, names lower-case, the last value of each. */
  readonly headers: Record<string, string>;
  readonly body: string;
  /** `HTTP/2` when curl spoke h2. */
  readonly version: string;
}

/** Whether curl is here and can speak h2c: the tests that need it skip with this reason otherwise. */
export async function curlH2Missing(): Promise<string | false> {
  const version = await new Promise<string>((resolve) => execFile("curl", ["--version"], (error, stdout) => resolve(error ? "" : stdout)));
  if (version === "") return "curl is not installed (apt-get install curl)";
  return /\bHTTP2\b/.test(version) ? false : "this curl has no HTTP/2 support";
}

/** `curl -si --http2-prior-knowledge` with extra arguments (`-X HEAD`, `-H ...`). */
export function curlH2(port: number, path: string, extra: readonly string[] = []): Promise<CurlAnswer> {
  return new Promise((resolve, reject) => {
    execFile("curl", ["-si", "--http2-prior-knowledge", "--max-time", "10", ...extra, `http://127.0.0.1:${port}${path}`], { encoding: "latin1" }, (error, stdout) => {
      if (error && stdout === "") return reject(error);
      const split = stdout.indexOf("\r\n\r\n");
      const lines = stdout.slice(0, split).split("\r\n");
      const [version = "", status = "0"] = lines[0]!.split(" ");
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(status), headers, body: stdout.slice(split + 4), version });
    });
  });
}
