// Issue 24.4: a connection the proxy refused and the client closed is gone at once: SIGTERM never waits for its head timer.
import { connect } from "node:net";
import t from "tap";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

/** Sends `bytes`, reads the answer until the proxy's end, then closes our side. */
function refusedAndClosed(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("end", () => {
      socket.end();
      resolve(text);
    });
  });
}

const REFUSALS: Record<string, string> = {
  "Content-Length with chunked (a parse error)": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
  "a missing Host": "GET / HTTP/1.1\r\n\r\n",
  "a head cut short by the client": "GET / HTTP/1.1\r\nHost: a\r\nX-Half",
};

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: SIGTERM right after a refused request whose client left`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    for (const [name, bytes] of Object.entries(REFUSALS)) {
      const upstream = await startUpstream(t);
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", upstream.url]);
      if (name.includes("cut short")) {
        // The client gives up mid-head and closes: no answer is owed.
        await new Promise<void>((resolve) => {
          const socket = connect(daemon.port, "127.0.0.1", () => socket.end(bytes));
          socket.on("error", () => {});
          socket.on("close", () => resolve());
          socket.resume();
        });
      } else {
        t.match(await refusedAndClosed(daemon.port, bytes), /^HTTP\/1\.1 400 /, `${name}: refused with a 400`);
      }
      const signalled = performance.now();
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0, `${name}: exit 0`);
      // The head timer is 10 s; a drain that waited for it took 9.4-9.6 s.
      const tookMs = performance.now() - signalled;
      t.ok(tookMs < 3_000, `${name}: exited ${Math.round(tookMs)} ms after SIGTERM`);
    }
  });
}
