// node:http2's floor as a proxy: the core stream API with plain callbacks, no compat objects, no pipe(), the request's headers passed on as they came; what issue 25 says the shape must be.
import { connect, createServer } from "node:http2";

const [port, upstream] = process.argv.slice(2);
let session;
const app = () => {
  if (!session || session.closed || session.destroyed) session = connect(upstream).on("error", () => {});
  return session;
};
createServer()
  .on("stream", (stream, headers) => {
    const out = app().request(headers, { endStream: stream.endAfterHeaders });
    // The client's stream can be gone before the app answers (h2load closes its connections at
    // the end of a run with streams in flight): respond() on it throws, so nothing is sent then.
    out.on("response", (answer) => stream.destroyed || stream.respond(answer));
    out.on("data", (chunk) => stream.destroyed || stream.write(chunk));
    out.on("end", () => stream.destroyed || stream.end());
    out.on("error", () => stream.destroyed || (stream.headersSent ? stream.close() : stream.respond({ ":status": 502 }, { endStream: true })));
    if (!stream.endAfterHeaders) {
      stream.on("data", (chunk) => out.write(chunk));
      stream.on("end", () => out.end());
    }
    stream.on("error", () => out.close());
    stream.on("close", () => out.destroyed || out.close());
  })
  .listen(Number(port), "127.0.0.1");
// A normal exit on the bench's SIGTERM, so `--cpu-prof` writes its profile.
process.on("SIGTERM", () => process.exit(0));
