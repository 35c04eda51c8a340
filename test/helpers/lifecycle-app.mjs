// A stand-in app for the lifecycle tests: serves /work?ms=<n> after n ms, counts its requests in flight, and records every signal as a JSON line on stdout.
// Usage: node lifecycle-app.mjs <port> [marker-file]; with a marker file, it is written once the app listens (its start observed from outside).
// SIGTERM, SIGINT and SIGQUIT stop it (after the requests in flight); other signals are only recorded.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";

const [port, marker] = process.argv.slice(2);
const record = (fields) => process.stdout.write(`${JSON.stringify({ ...fields, at: Date.now() })}\n`);

let inFlight = 0;
let signals = 0;
const server = createServer((req, res) => {
  const url = new URL(req.url, "http://app");
  if (url.pathname === "/work") {
    inFlight++;
    setTimeout(() => {
      inFlight--;
      res.end(`done ${url.searchParams.get("ms")}`);
    }, Number(url.searchParams.get("ms") ?? 0));
    return;
  }
  res.end(`app ${req.method} ${req.url}`);
});
for (const signal of ["SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGWINCH"]) {
  process.on(signal, () => {
    signals++;
    record({ msg: "app got signal", signal, count: signals, inFlight });
    if (signal === "SIGTERM" || signal === "SIGINT" || signal === "SIGQUIT") {
      server.close(() => process.exit(0));
      server.closeIdleConnections();
    }
  });
}
server.listen(Number(port), "127.0.0.1", () => {
  if (marker) writeFileSync(marker, String(process.pid));
  record({ msg: "app listening" });
});
