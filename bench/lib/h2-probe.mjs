// One h2c (prior knowledge) GET: does this server speak HTTP/2 cleartext and answer 200? Tells "unsupported by this binary" apart from a failure.
import { connect } from "node:http2";

/** Resolves to null when GET `path` over h2c answers 200 within `timeoutMs`, else to the reason (a short string). */
export function probeH2c(port, path = "/file", timeoutMs = 3000) {
  return new Promise((resolve) => {
    const session = connect(`http://127.0.0.1:${port}`);
    const finish = (reason) => {
      clearTimeout(timer);
      session.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => finish(`no h2c answer within ${timeoutMs} ms`), timeoutMs);
    session.on("error", (error) => finish(`h2c request failed: ${error.code ?? error.message}`));
    const stream = session.request({ ":path": path });
    stream.on("error", (error) => finish(`h2c request failed: ${error.code ?? error.message}`));
    stream.on("response", (headers) => {
      const status = headers[":status"];
      stream.resume();
      stream.on("end", () => finish(status === 200 ? null : `h2c answer ${status}`));
    });
    stream.end();
  });
}
