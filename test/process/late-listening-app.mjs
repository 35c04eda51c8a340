// A stand-in app that listens only when told: it opens a control port first, and its serving port on GET /listen there. Logs JSON lines on stdout (shared with the proxy's log).
// Usage: node late-listening-app.mjs <port> <control-port>
import { createServer } from "node:http";

const [port, controlPort] = process.argv.slice(2).map(Number);
const record = (fields) => process.stdout.write(`${JSON.stringify({ ...fields, at: Date.now() })}\n`);

const app = createServer((req, res) => res.end(`app ${req.url}`));
const control = createServer((req, res) => {
  if (req.url === "/listen") app.listen(port, "127.0.0.1", () => res.end("listening"));
  else res.end("unknown");
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    record({ msg: "app got signal", signal });
    control.close();
    app.close(() => process.exit(0));
    if (!app.listening) process.exit(0);
  });
}
control.listen(controlPort, "127.0.0.1", () => record({ msg: "app control ready" }));
