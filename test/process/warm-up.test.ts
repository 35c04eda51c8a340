// The start's warm-up on the shipped program: it runs while the app is not ready, never shows in the access log or the metrics, and never holds readiness back.
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import type { LogRecord } from "../helpers/log-capture.js";
import { scrapeText } from "../helpers/scrape.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const LATE_APP = join(import.meta.dirname, "late-listening-app.mjs");
/** An app that listens the moment it runs. */
const PROMPT_APP = "const [port] = process.argv.slice(1).map(Number); require('node:http').createServer((q, s) => s.end('app ' + q.url)).listen(port, '127.0.0.1');";

/** Every line the daemon wrote that is an access line or mentions the warm-up's paths or its gRPC service. */
const accessLines = (records: readonly LogRecord[]) => records.filter((record) => record.msg === "request");
const mentionsWarmUp = (records: readonly LogRecord[]) => records.filter((record) => record.msg !== "warm-up done" && JSON.stringify(record).includes("warm-up"));
const requestSeries = (text: string) => text.split("\n").filter((line) => line.startsWith("readiness_proxy_requests_total"));

for (const artifact of BUILT_ARTIFACTS.filter((built) => built.name === "binary")) {
  t.test(`${artifact.name}: the warm-up before ready`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    t.test("runs while the app does not listen; not in the access log or the metrics; /readyz fails until the app listens", async (t) => {
      const [appPort, controlPort, metricsPort] = [await closedPort(), await closedPort(), await closedPort()];
      const daemon = await spawnDaemon(t, artifact.command, [
        "--upstream", `http://127.0.0.1:${appPort}`, "--access-log", "--log-level", "debug", "--metrics-listen", `127.0.0.1:${metricsPort}`, "--readiness-cache-ttl", "0s",
        "--", process.execPath, LATE_APP, String(appPort), String(controlPort),
      ]);
      t.teardown(() => {
        if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
        return daemon.exited.then(() => undefined);
      });
      await daemon.waitForLog("app control ready");
      const done = await daemon.waitForLog("warm-up done");
      // Its count or its 5 s, whichever comes first on a loaded machine: never "ready".
      t.match(done, { stoppedBy: /^(done|time)$/ }, "the app never listened: the warm-up ran to its end");
      t.ok(Number(done.http1) > 0 && Number(done.grpc) > 0, "both protocols were exchanged");
      t.equal((await send(daemon.port, "/readyz")).status, 503, "readiness still fails while the app is not listening");
      t.same(accessLines(daemon.records), [], "no access line for the warm-up's exchanges");
      t.same(mentionsWarmUp(daemon.records), [], "nothing else logged of them");
      t.same(requestSeries(await scrapeText(metricsPort)).filter((line) => !line.endsWith(" 0")), [], "no proxied request counted");
      // The same observers do see a client's request: the warm-up's absence is not theirs.
      await send(controlPort, "/listen");
      t.equal((await send(daemon.port, "/readyz")).status, 200);
      t.equal((await send(daemon.port, "/real")).text(), "app /real");
      // Access lines are written asynchronously: the first one to come is this request's.
      t.match(await daemon.waitForLog("request"), { path: "/real" });
      t.equal(accessLines(daemon.records).length, 1);
      t.match(requestSeries(await scrapeText(metricsPort)).join("\n"), / 1$/m);
    });

    t.test("an app that listens at once is ready (the warm-up stops for it)", async (t) => {
      const appPort = await closedPort();
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--log-level", "debug", "--", process.execPath, "-e", PROMPT_APP, String(appPort)]);
      t.teardown(() => {
        if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
        return daemon.exited.then(() => undefined);
      });
      // Eventually ready, whatever the warm-up is doing: bounded by the daemon's 1 s cache, asked until 200.
      let status = 0;
      for (let asked = 0; asked < 400 && status !== 200; asked++) {
        status = (await send(daemon.port, "/readyz")).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      t.equal(status, 200);
      const done = await daemon.waitForLog("warm-up done");
      t.match(done, { stoppedBy: /^(ready|done)$/ });
      t.equal((await send(daemon.port, "/x")).text(), "app /x");
    });
  });
}
