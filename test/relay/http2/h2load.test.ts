// h2load (nghttp2-client) through the proxy with each --upstream-protocol: every request answered, none failed; HTTP/1.1 beside it unchanged.
import { execFile } from "node:child_process";
import t from "tap";
import { startH2Upstream } from "../../helpers/h2.js";
import { send } from "../../helpers/http-client.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";
import { startUpstream } from "../../helpers/upstream.js";

const missing = await new Promise<string | false>((resolve) => execFile("h2load", ["--version"], (error) => resolve(error ? "h2load is not installed (apt-get install nghttp2-client)" : false)));

function h2load(port: number): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile("h2load", ["-n", "2000", "-c", "10", "-m", "10", "-T", "20", `http://127.0.0.1:${port}/bench`], { timeout: 60_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
  );
}

for (const protocol of ["auto", "h2c", "http1"] as const) {
  t.test(`h2load -n 2000 -c 10 -m 10 with --upstream-protocol ${protocol}: 0 errors`, { skip: missing }, async (t) => {
    const app = protocol === "http1" ? await startUpstream(t) : await startH2Upstream(t);
    const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", protocol]);
    const report = await h2load(daemon.port);
    t.match(report, /requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout/, report.split("\n").find((line) => line.startsWith("requests:")) ?? "no requests line");
    t.match(report, /status codes: 2000 2xx/);
    if (protocol !== "http1") t.equal((await send(daemon.port, "/after")).status, protocol === "h2c" ? 200 : 502, "HTTP/1.1 on the same port goes its own way");
  });
}
