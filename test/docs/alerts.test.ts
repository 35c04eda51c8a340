// The example alert rules and PodMonitor: promtool accepts the rules, and they only name metrics the proxy serves.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parse } from "yaml";

const root = join(import.meta.dirname, "../..");
const rules = join(root, "docs/deploy/alerts.yaml");
const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;

t.test("promtool check rules accepts docs/deploy/alerts.yaml", { skip: !hasPromtool && "promtool is not installed (Debian package prometheus; .ci/run installs it)" }, async (t) => {
  const check = spawnSync("promtool", ["check", "rules", rules], { encoding: "utf8" });
  t.equal(check.status, 0, "promtool exit 0");
  t.comment(check.stdout.trim());
  t.match(check.stdout, /SUCCESS: 3 rules found/);
});

t.test("the rules name only metrics of CONTRACT §9, and the PodMonitor scrapes /metrics", async (t) => {
  const text = readFileSync(rules, "utf8");
  const named = new Set(text.match(/readiness_proxy_\w+/g));
  const served = ["readiness_proxy_check_ok", "readiness_proxy_ready", "readiness_proxy_draining", "readiness_proxy_upstream_errors_total", "readiness_proxy_requests_total", "readiness_proxy_request_duration_seconds_bucket"];
  t.same([...named].sort(), [...served].sort());
  const monitor = parse(readFileSync(join(root, "docs/deploy/podmonitor.yaml"), "utf8")) as { kind: string; spec: { podMetricsEndpoints: Array<{ path: string; port: string }> } };
  t.equal(monitor.kind, "PodMonitor");
  t.same(monitor.spec.podMetricsEndpoints[0], { port: "metrics", path: "/metrics", interval: "30s" });
});
