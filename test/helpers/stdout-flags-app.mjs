// A stand-in app for the entrypoint form that shows what its stdout is: each answer is its own fd 1's file status flags (from /proc), and each request is a JSON line it writes to that stdout itself.
// Usage: node stdout-flags-app.mjs <port>. Never touches process.stdout: Node's stream would make a pipe non-blocking itself.
import { readFileSync, writeSync } from "node:fs";
import { createServer } from "node:http";

const [port] = process.argv.slice(2);
const flagsOfStdout = () => Number.parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync("/proc/self/fdinfo/1", "utf8"))[1], 8);
const record = (fields) => writeSync(1, `${JSON.stringify(fields)}\n`);

const server = createServer((req, res) => {
  record({ msg: "app request", url: req.url });
  res.end(String(flagsOfStdout()));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
server.listen(Number(port), "127.0.0.1", () => record({ msg: "app listening" }));
