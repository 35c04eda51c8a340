// MaintenanceMode: on, off, expiry; `maintenance on` (warn, until) and `maintenance off` (info, reason) once per change; the clock is moved by hand.
import t from "tap";
import { MaintenanceMode, type MaintenanceClock } from "../../src/admin/maintenance.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualTimers } from "../helpers/test-doubles.js";

function setUp() {
  const logs = captureLog();
  const clock: MaintenanceClock & ManualTimers = new ManualTimers(Date.parse("2026-01-01T00:00:00.000Z"));
  let changes = 0;
  const mode = new MaintenanceMode({ log: logs.log, clock, onChange: () => changes++ });
  return { logs, clock, mode, changes: () => changes };
}

t.test("on until turned off: fails, logs once, until null; off logs reason deleted", async (t) => {
  const { logs, mode, changes } = setUp();
  t.equal(mode.on, false);
  mode.turnOn();
  mode.turnOn();
  t.equal(mode.on, true);
  t.equal(mode.until, null);
  t.match(logs.records, [{ level: 40, msg: "maintenance on", until: null }]);
  t.equal(logs.records.length, 1, "a second on without a change is not logged again");
  mode.turnOff();
  mode.turnOff();
  t.equal(mode.on, false);
  t.match(logs.records.slice(1), [{ level: 30, msg: "maintenance off", reason: "deleted" }]);
  t.equal(logs.records.length, 2);
  t.equal(changes(), 2, "each change told once");
});

t.test("on for a duration: until is its ISO end; it ends by itself with reason expired", async (t) => {
  const { logs, clock, mode } = setUp();
  mode.turnOn(30_000);
  t.equal(mode.until, "2026-01-01T00:00:30.000Z");
  t.match(logs.records, [{ msg: "maintenance on", until: "2026-01-01T00:00:30.000Z" }]);
  clock.advance(29_999);
  t.equal(mode.on, true);
  clock.advance(1);
  t.equal(mode.on, false);
  t.equal(mode.until, null);
  t.match(logs.records.slice(1), [{ msg: "maintenance off", reason: "expired" }]);
  t.equal(clock.pending, 0);
});

t.test("a new on replaces the expiry; off before it ends cancels it", async (t) => {
  const { logs, clock, mode } = setUp();
  mode.turnOn(10_000);
  clock.advance(5_000);
  mode.turnOn(10_000);
  t.equal(mode.until, "2026-01-01T00:00:15.000Z", "counted from the second on");
  clock.advance(6_000);
  t.equal(mode.on, true, "the first expiry no longer applies");
  mode.turnOn();
  t.equal(mode.until, null, "without a duration: until turned off");
  t.equal(clock.pending, 0);
  mode.turnOff();
  t.same(logs.messages(), ["maintenance on", "maintenance on", "maintenance on", "maintenance off"]);
  t.same(logs.records.filter((record) => record.msg === "maintenance off").map((record) => record.reason), ["deleted"]);
});
