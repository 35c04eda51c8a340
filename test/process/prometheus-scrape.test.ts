// --metrics-merge through a real Prometheus: /usr/bin/prometheus scrapes the binary's metrics listener, and its query API has our series, the app's, and the target up.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { seriesValue } from "../helpers/scrape.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const PROMETHEUS = "/usr/bin/prometheus";
const prometheusMissing = spawnSync(PROMETHEUS, ["--version"]).status === 0 ? false : `${PROMETHEUS} is not installed (Debian package prometheus): no real scrape of the merged output`;
const binaryMissing = existsSync(BINARY) ? false : "dist/readiness-proxy is not built: run make build";
const skip = prometheusMissing || binaryMissing;
if (skip) console.log(`# skip: ${skip}`);
// Prometheus starts its TSDB and the first scrape lands within a scrape interval; on a loaded
// 2-core machine that is seconds. Every wait below has its own bound.
t.setTimeout(180_000);

/** `probe` until it returns a value, every 100 ms, at most `limitMs`: Prometheus's state is only seen by asking. */
async function until<T>(what: string, limitMs: number, probe: () => Promise<T | undefined>, diagnostics: () => string): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms\n${diagnostics()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

t.test("Prometheus scrapes one target: our series and the app's in one scrape, up 1, no duplicate samples", { skip }, async (t) => {
  const app = spawn("/usr/bin/python3", [join(import.meta.dirname, "../helpers/metrics-app.py")], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => void (app.exitCode === null && app.kill("SIGKILL")));
  const appPort = Number((await createInterface({ input: app.stdout! })[Symbol.asyncIterator]().next()).value);

  const daemon = await spawnDaemon(t, [BINARY], ["--metrics-listen", "127.0.0.1:0", "--metrics-merge", `http://127.0.0.1:${appPort}/metrics`]);
  const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);

  const dir = mkdtempSync(join(tmpdir(), "rp-prometheus-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  writeFileSync(
    join(dir, "prometheus.yml"),
    ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s", "scrape_configs:", "  - job_name: pod", "    static_configs:", `      - targets: ["127.0.0.1:${metricsPort}"]`, ""].join("\n"),
  );
  const webPort = await closedPort();
  const prometheus = spawn(
    PROMETHEUS,
    [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${webPort}`, "--log.level=warn"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  prometheus.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  prometheus.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const prometheusExited = new Promise<void>((resolve) => prometheus.on("exit", () => resolve()));
  t.teardown(async () => {
    if (prometheus.exitCode === null && prometheus.signalCode === null) prometheus.kill("SIGTERM");
    await prometheusExited;
  });
  const diagnostics = () => `prometheus said:\n${output.slice(-4000)}`;

  const query = async (expression: string): Promise<VectorResult[]> => {
    const reply = await send(webPort, `/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = reply.json() as { status: string; data?: { resultType: string; result: VectorResult[] } };
    if (reply.status !== 200 || body.status !== "success" || body.data?.resultType !== "vector") throw new Error(`query ${expression}: ${reply.status} ${reply.text()}`);
    return body.data.result;
  };
  /** The one sample of `expression` once Prometheus has it. */
  const sample = (expression: string) => until(`${expression} in Prometheus`, 60_000, async () => (await query(expression))[0], diagnostics);

  await until("Prometheus ready", 60_000, async () => ((await send(webPort, "/-/ready")).status === 200 ? true : undefined), diagnostics);
  const up = await sample('up{job="pod"}');
  t.same(up.metric, { __name__: "up", instance: `127.0.0.1:${metricsPort}`, job: "pod" });
  t.equal(up.value[1], "1", "the scrape of the merged /metrics succeeded");

  const ours = await sample('readiness_proxy_metrics_merge_ok{job="pod"}');
  t.equal(ours.value[1], "1", "one of ours: the app's text was fetched and parsed");
  t.match((await sample('readiness_proxy_build_info{job="pod"}')).metric, { version: "0.1.0" });
  const appSeries = await sample('app_jobs_total{job="pod",queue="a"}');
  t.equal(appSeries.value[1], "7", "one of the app's, from the same target");
  t.equal((await sample('app_latency_seconds_count{job="pod"}')).value[1], "2");
  const dropped = await sample('readiness_proxy_metrics_merge_dropped_families_total{job="pod"}');
  t.ok(Number(dropped.value[1]) >= 1, "the app's process_cpu_user_seconds_total dropped and counted");
  const cpu = await query('process_cpu_user_seconds_total{job="pod"}');
  t.equal(cpu.length, 1, "one series of the clashing name: ours");
  t.not(cpu[0]?.value[1], "99", "not the app's value");

  // Prometheus's own counters: a merged scrape with a name twice would show as duplicate samples.
  const own = (await send(webPort, "/metrics")).text();
  t.equal(seriesValue(own, "prometheus_target_scrapes_sample_duplicate_timestamp_total"), 0, "no duplicate sample in any scrape");
  t.equal(seriesValue(own, "prometheus_target_scrapes_sample_out_of_order_total"), 0);
  t.equal((await send(daemon.port, "/healthz")).status, 200);
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});
