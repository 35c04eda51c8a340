// The naive baseline: a node:http2 proxy in front of an h2c app, request and response piped both ways (compat API, no tuning).
import { connect, createServer } from "node:http2";

const [port, upstream] = process.argv.slice(2);
let session;
const app = () => {
  if (!session || session.closed || session.destroyed) session = connect(upstream).on("error", () => {});
  return session;
};
const HOP = new Set([":method", ":path", ":scheme", ":authority", "connection", "keep-alive", "transfer-encoding", "upgrade"]);
const copy = (headers) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP.has(name) && !name.startsWith(":")));
createServer((req, res) => {
  const up = app().request({ ":method": req.method, ":path": req.url, ":authority": req.headers[":authority"], ...copy(req.headers) });
  up.on("response", (headers) => {
    res.writeHead(headers[":status"], copy(headers));
    up.pipe(res);
  });
  up.on("error", () => res.headersSent ? res.destroy() : res.writeHead(502).end());
  req.pipe(up);
}).listen(Number(port), "127.0.0.1");
