// The proxy-made error log under an outage: the first line at once, one summary per interval with the count held back, details at debug; a quiet window ends the episode.
import t from "tap";
import { ProxyErrorLog } from "../../src/relay/proxy-error-log.js";
import { captureLog } from "../helpers/log-capture.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { send } from "../helpers/http-client.js";
import { closedPort } from "../helpers/test-doubles.js";

/** Windows end only when the test says so. */
class ManualSchedule {
  pending: Array<() => void> = [];
  schedule = (run: () => void) => {
    this.pending.push(run);
  };
  endWindows(): void {
    const due = this.pending;
    this.pending = [];
    for (const run of due) run();
  }
}

t.test("an outage: one line per kind at once, then one summary per window", async (t) => {
  const { log, records } = captureLog();
  const windows = new ManualSchedule();
  const errors = new ProxyErrorLog(log, { schedule: windows.schedule, intervalMs: 10_000 });
  const warnings = () => records.filter((record) => record.level === 40);
  for (let index = 0; index < 1000; index++) errors.warn("upstream unavailable", { requestId: `r${index}`, code: "ECONNREFUSED" });
  for (let index = 0; index < 10; index++) errors.warn("upstream response head timed out", { requestId: `t${index}` });
  t.same(warnings().map((record) => [record.msg, record.requestId]), [["upstream unavailable", "r0"], ["upstream response head timed out", "t0"]], "the first of each kind, in full");
  t.equal(records.filter((record) => record.level === 20).length, 999 + 9, "the rest at debug, details kept");
  windows.endWindows();
  t.same(warnings().slice(2).map((record) => [record.msg, record.suppressed, record.intervalMs]), [
    ["upstream unavailable", 999, 10_000],
    ["upstream response head timed out", 9, 10_000],
  ]);
  for (let index = 0; index < 5; index++) errors.warn("upstream unavailable", { requestId: `s${index}` });
  windows.endWindows();
  t.match(warnings().at(-1), { msg: "upstream unavailable", suppressed: 5 }, "the outage goes on: a summary per window, no full lines");
  windows.endWindows();
  t.equal(warnings().length, 5, "a quiet window closes the episode without a line");
  errors.warn("upstream unavailable", { requestId: "after" });
  t.match(warnings().at(-1), { msg: "upstream unavailable", requestId: "after" }, "the next outage starts with a full line");
});

t.test("through the daemon: 200 refused requests are one warn line", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const statuses = new Set<number>();
  for (let index = 0; index < 200; index++) statuses.add((await send(daemon.port, `/x${index}`)).status);
  t.same([...statuses], [502]);
  const warned = daemon.logs.records.filter((record) => record.msg === "upstream unavailable" && record.level === 40);
  t.equal(warned.length, 1);
  t.match(warned[0], { status: 502, code: "ECONNREFUSED", url: "/x0" });
});
