// promtool check metrics on the built binary's live /metrics: clean, with no exception (users lint scrapes in CI).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const promtoolMissing = spawnSync("promtool", ["--version"]).status === 0 ? false : "promtool is not installed (Debian package prometheus): the live /metrics is not linted";
const binaryMissing = existsSync(BINARY) ? false : "dist/readiness-proxy is not built: run make build";

if (promtoolMissing) console.log(`# skip: ${promtoolMissing}`);
t.test("promtool check metrics exits 0 on the binary's /metrics", { skip: promtoolMissing || binaryMissing }, async (t) => {
  const daemon = await spawnDaemon(t, [BINARY], ["--metrics-listen", "127.0.0.1:0", "--readiness-required-listener", "15008", "--proc-root", join(fixtures, "listen-tcp-only"), "--max-concurrency", "4"]);
  const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);
  await send(daemon.port, "/readyz");
  await send(daemon.port, "/x"); // a 502: the request and error series exist
  const scraped = await send(metricsPort, "/metrics");
  t.equal(scraped.status, 200);
  t.match(scraped.text(), /^nodejs_active_handles\{type=/m, "the per-type gauges stay: their sum is the total");
  const check = spawnSync("promtool", ["check", "metrics"], { input: scraped.body });
  t.equal(`${check.stdout}${check.stderr}`, "", "no complaint at all");
  t.equal(check.status, 0, "promtool exits 0");
  daemon.child.kill("SIGTERM");
  await daemon.exited;
});
