// An h2c app in a process of its own (so its memory is not the proxy's) that never answers: `read` takes every request body and drops it, `unread` never reads one (no stream credit goes back). Prints "listening <port>", "opened <streams>" as each stream comes, and "received <octets>" as every 64 KiB more of body does.
import http2 from "node:http2";

const mode = process.argv[2];
if (mode !== "read" && mode !== "unread") throw new Error(`h2c-sink-app.mjs read|unread, got ${mode}`);
const server = http2.createServer();
let received = 0;
let opened = 0;
server.on("stream", (stream) => {
  stream.on("error", () => {});
  process.stdout.write(`opened ${++opened}\n`);
  if (mode === "unread") return stream.pause();
  stream.on("data", (chunk) => {
    const before = received;
    received += chunk.length;
    if (received >> 16 !== before >> 16) process.stdout.write(`received ${received}\n`);
  });
});
server.on("sessionError", () => {});
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
