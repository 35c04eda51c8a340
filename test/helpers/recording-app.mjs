// A stand-in app for the entrypoint form: serves HTTP, records every signal it gets as a JSON line on stdout (shared with the proxy's log).
// Usage: node recording-app.mjs <port> <mode>; modes: serve, ignore-term (needs SIGKILL), exit-<code> (exits at once with that code).
import { createServer } from "node:http";

const [port, mode = "serve"] = process.argv.slice(2);
const record = (fields) => process.stdout.write(`${JSON.stringify({ ...fields, at: Date.now() })}\n`);

if (mode.startsWith("exit-")) {
  record({ msg: "app exiting on its own", code: Number(mode.slice(5)) });
  process.exit(Number(mode.slice(5)));
}

let releaseStream;
const server = createServer((req, res) => {
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: 1\n\n");
    releaseStream = () => res.end("data: 2\n\n");
    return;
  }
  if (req.url === "/release") {
    releaseStream?.();
    res.end("released");
    return;
  }
  res.end(`app ${req.url}`);
});
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"]) {
  process.on(signal, () => {
    record({ msg: "app got signal", signal });
    if ((signal === "SIGTERM" || signal === "SIGINT") && mode !== "ignore-term") server.close(() => process.exit(0));
  });
}
server.listen(Number(port), "127.0.0.1", () => record({ msg: "app listening", nodeOptions: process.env.NODE_OPTIONS ?? null, appSetting: process.env.APP_SETTING ?? null }));
