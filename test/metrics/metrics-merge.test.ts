// --metrics-merge through a real daemon and a real app: the app's families after ours, a clash dropped and counted, promtool-clean, merge_ok 0 when the app is down, slow, malformed or too large, the proxy never held.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Registry } from "prom-client";
import t, { type Test } from "tap";
import { MetricsMerge } from "../../src/metrics/metrics-merge.js";
import { send } from "../helpers/http-client.js";
import { captureLog } from "../helpers/log-capture.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { seriesValue } from "../helpers/scrape.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const promtoolMissing = spawnSync("promtool", ["--version"]).status === 0 ? false : "promtool is not installed (Debian package prometheus): the merged output is not linted";
if (promtoolMissing) console.log(`# skip: ${promtoolMissing}`);

/** An app's exposition: two families of its own and one whose name is ours. */
const APP_TEXT = [
  "# HELP app_jobs_total Jobs done.",
  "# TYPE app_jobs_total counter",
  'app_jobs_total{queue="a"} 7',
  "# HELP app_latency_seconds Job latency.",
  "# TYPE app_latency_seconds histogram",
  'app_latency_seconds_bucket{le="0.5"} 1',
  'app_latency_seconds_bucket{le="+Inf"} 2',
  "app_latency_seconds_sum 1.25",
  "app_latency_seconds_count 2",
  "# HELP process_cpu_user_seconds_total The app's own CPU time.",
  "# TYPE process_cpu_user_seconds_total counter",
  "process_cpu_user_seconds_total 99",
  "",
].join("\n");

async function mergingDaemon(t: Test, mergeUrl: string) {
  const daemon = await startTestDaemon(t, ["--metrics-listen", "127.0.0.1:0", "--metrics-merge", mergeUrl, "--proc-root", join(fixtures, "established-only")]);
  return { daemon, scrape: async () => (await send(daemon.metricsPort!, "/metrics")).text() };
}

t.test("the app's families follow ours; the one named like ours is dropped and counted; promtool accepts it all", async (t) => {
  const app = await startUpstream(t);
  app.handle((_req, res) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(APP_TEXT));
  const { scrape } = await mergingDaemon(t, `${app.url}/metrics`);
  const text = await scrape();
  t.equal(seriesValue(text, "readiness_proxy_metrics_merge_ok"), 1);
  t.equal(seriesValue(text, "readiness_proxy_metrics_merge_dropped_families_total"), 1, "process_cpu_user_seconds_total is ours");
  t.equal(seriesValue(text, 'app_jobs_total{queue="a"}'), 7);
  t.equal(seriesValue(text, "app_latency_seconds_count"), 2);
  t.ok(text.indexOf("readiness_proxy_build_info") < text.indexOf("app_jobs_total"), "ours first");
  t.notOk(/^process_cpu_user_seconds_total 99$/m.test(text), "the app's clashing family is not served");
  t.equal(text.match(/^# TYPE process_cpu_user_seconds_total /gm)?.length, 1, "one family of that name: ours");
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_dropped_families_total"), 2, "counted on every scrape");
  t.test("promtool check metrics", { skip: promtoolMissing }, async (t) => {
    const check = spawnSync("promtool", ["check", "metrics"], { input: text });
    t.equal(`${check.stdout}${check.stderr}`, "", "no complaint at all");
    t.equal(check.status, 0);
  });
});

t.test("merge_ok 0 and ours served when the app is down, malformed, refuses or sends more than 8 MiB", async (t) => {
  const app = await startUpstream(t);
  let answer: (res: import("node:http").ServerResponse) => void = (res) => res.end(APP_TEXT);
  app.handle((_req, res) => answer(res));
  const down = await mergingDaemon(t, `http://127.0.0.1:${await closedPort()}/metrics`);
  const downText = await down.scrape();
  t.equal(seriesValue(downText, "readiness_proxy_metrics_merge_ok"), 0, "down");
  t.match(downText, /^readiness_proxy_build_info\{/m, "ours served anyway");

  const { scrape } = await mergingDaemon(t, `${app.url}/metrics`);
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_ok"), 1, "up");
  answer = (res) => res.end("<html><body>Not metrics</body></html>\n");
  let text = await scrape();
  t.equal(seriesValue(text, "readiness_proxy_metrics_merge_ok"), 0, "malformed");
  t.notMatch(text, /html/, "none of the malformed text served");
  answer = (res) => res.writeHead(500).end("app_jobs_total 1\n");
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_ok"), 0, "a 500");
  answer = (res) => {
    // Valid text (one family, a sample per line), past 8 MiB: refused while reading, none of it served.
    res.writeHead(200).write("# TYPE app_big gauge\n");
    for (let chunk = 0; chunk < 90; chunk++) res.write(Array.from({ length: 1024 }, (_, index) => `app_big{i="${chunk * 1024 + index}",pad="${"x".repeat(80)}"} 1\n`).join(""));
    res.end();
  };
  text = await scrape();
  t.equal(seriesValue(text, "readiness_proxy_metrics_merge_ok"), 0, "too large");
  t.notMatch(text, /app_big_/);
  answer = (res) => res.end(APP_TEXT);
  t.equal(seriesValue(await scrape(), "readiness_proxy_metrics_merge_ok"), 1, "back to 1 when the app is");
});

t.test("an app that never finishes: merge_ok 0 after the bound, and the proxy answers meanwhile", async (t) => {
  const app = await startUpstream(t);
  const asked = deferred();
  app.handleRaw((req, res) => {
    if (req.url !== "/metrics") return void res.end("proxied");
    res.writeHead(200).write("app_jobs_total 1\n"); // and never more
    asked.resolve();
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--metrics-listen", "127.0.0.1:0", "--metrics-merge", `${app.url}/metrics`, "--proc-root", join(fixtures, "established-only")]);
  let scraped = false;
  const scrape = send(daemon.metricsPort!, "/metrics").then((reply) => ((scraped = true), reply.text()));
  await asked.promise;
  const proxied = await send(daemon.port, "/x");
  t.equal(proxied.text(), "proxied");
  t.equal(scraped, false, "the proxied request was answered while the scrape waited on the app");
  const text = await scrape;
  t.equal(seriesValue(text, "readiness_proxy_metrics_merge_ok"), 0);
  t.notMatch(text, /^app_jobs_total/m);
});

t.test("the 2 s and 8 MiB bounds hold while reading (small bounds injected)", async (t) => {
  const app = await startUpstream(t);
  const registry = new Registry();
  app.handleRaw((_req, res) => res.writeHead(200).write("app_a 1\n"));
  const logs = captureLog();
  const slow = new MetricsMerge(`${app.url}/metrics`, registry, logs.log, { timeoutMs: 50, maxOctets: 1024 });
  const reasons = () => logs.records.filter((record) => record.msg === "metrics merge failing; serving ours alone").map((record) => record.reason);
  t.teardown(() => slow.close());
  t.equal(await slow.appText(), "", "a body that never ends: cut at the deadline");
  t.same(reasons(), ["timeout after 0.05s"]);
  app.handleRaw((_req, res) => res.writeHead(200).end("app_a 1\n".repeat(200)));
  t.equal(await slow.appText(), "", "1600 octets past a 1024 bound");
  t.same(reasons(), ["timeout after 0.05s"], "still failing: not logged again");
  app.handleRaw((_req, res) => res.writeHead(200).end("app_a 1\n"));
  t.equal(await slow.appText(), "app_a 1\n");
  t.same(logs.messages().filter((msg) => msg.startsWith("metrics merge")), ["metrics merge failing; serving ours alone", "metrics merge passing"]);
  app.handleRaw((_req, res) => res.writeHead(200).end("app_a 1\n".repeat(200)));
  await slow.appText();
  t.same(reasons(), ["timeout after 0.05s", "more than 1024 octets"]);
});
