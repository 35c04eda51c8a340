// --metrics-merge on the built binary with a python app serving /metrics: one merged scrape through promtool, the clash dropped and counted, merge_ok 0 when the app is malformed, too large, too slow or down.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { seriesValue } from "../helpers/scrape.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const promtoolMissing = spawnSync("promtool", ["--version"]).status === 0 ? false : "promtool is not installed (Debian package prometheus): the merged output is not linted";
const binaryMissing = existsSync(BINARY) ? false : "dist/readiness-proxy is not built: run make build";
if (promtoolMissing) console.log(`# skip: ${promtoolMissing}`);
if (binaryMissing) console.log(`# skip: ${binaryMissing}`);

t.test("one scrape target: ours then the app's, promtool-clean; merge_ok 0 when the app is malformed, too large, too slow or down", { skip: binaryMissing }, async (t) => {
  const app = spawn("/usr/bin/python3", [join(import.meta.dirname, "../helpers/metrics-app.py")], { stdio: ["ignore", "pipe", "inherit"] });
  const appExited = new Promise((resolve) => app.on("exit", resolve));
  t.teardown(() => void (app.exitCode === null && app.kill("SIGKILL")));
  const appPort = Number((await createInterface({ input: app.stdout! })[Symbol.asyncIterator]().next()).value);
  const mode = (body: string) => send(appPort, "/mode", { method: "POST", body });

  const daemon = await spawnDaemon(t, [BINARY], ["--metrics-listen", "127.0.0.1:0", "--metrics-merge", `http://127.0.0.1:${appPort}/metrics`, "--proc-root", join(fixtures, "established-only")]);
  const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);
  const scrape = async () => {
    const reply = await send(metricsPort, "/metrics");
    t.equal(reply.status, 200);
    return reply.text();
  };

  const merged = await scrape();
  t.equal(seriesValue(merged, "readiness_proxy_metrics_merge_ok"), 1);
  t.equal(seriesValue(merged, "readiness_proxy_metrics_merge_dropped_families_total"), 1, "the app's process_cpu_user_seconds_total clashes with ours");
  t.equal(seriesValue(merged, 'app_jobs_total{queue="a"}'), 7);
  t.equal(seriesValue(merged, 'app_latency_seconds_bucket{le="+Inf"}'), 2);
  t.notMatch(merged, /^process_cpu_user_seconds_total 99$/m);
  if (promtoolMissing) t.comment(`skip: promtool check metrics: ${promtoolMissing}`);
  else {
    const check = spawnSync("promtool", ["check", "metrics"], { input: merged });
    t.equal(`${check.stdout}${check.stderr}`, "", "promtool: no complaint at all");
    t.equal(check.status, 0, "promtool exits 0");
  }

  for (const [what, body] of [
    ["malformed", "malformed"],
    ["past 8 MiB", "large"],
    ["slower than 2 s", "slow"],
  ] as const) {
    await mode(body);
    const text = await scrape();
    t.equal(seriesValue(text, "readiness_proxy_metrics_merge_ok"), 0, what);
    t.notMatch(text, /^app_/m, `${what}: none of the app's text served`);
    t.match(text, /^readiness_proxy_build_info\{/m, `${what}: ours served anyway`);
    t.equal((await send(daemon.port, "/healthz")).status, 200, `${what}: the proxy answers`);
  }
  const lines = (msg: string) => daemon.records.filter((record) => record.msg === msg);
  t.match(lines("metrics merge failing; serving ours alone"), [{ level: 40, url: `http://127.0.0.1:${appPort}/metrics`, reason: /^not Prometheus text format: line 1: / }], "one warn line for three failing scrapes");
  await mode("ok");
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_ok"), 1, "back to 1");
  t.match(lines("metrics merge passing"), [{ level: 30 }]);
  app.kill("SIGKILL");
  await appExited;
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_ok"), 0, "the app down");
  t.match(lines("metrics merge failing; serving ours alone")[1], { reason: "connection refused" });
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});
