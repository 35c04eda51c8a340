// An SSE upstream: GET /stream sends COUNT events GAP_MS apart, each stamped with its send time. Usage: node sse-upstream.mjs PORT COUNT GAP_MS
import { createServer } from "node:http";

const [port, count, gapMs] = process.argv.slice(2).map(Number);
createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sent = 0;
  const timer = setInterval(() => {
    res.write(`data: ${sent}\n\n`);
    if (++sent === count) {
      clearInterval(timer);
      res.end();
    }
  }, gapMs);
  res.on("close", () => clearInterval(timer));
}).listen(port, "127.0.0.1");
