// InFlightRequests: settled() waits for exactly the requests begun before it, however many begin after.
import t from "tap";
import { InFlightRequests } from "../../src/relay/in-flight.js";

/** Whether `promise` has settled by the time queued microtasks have run. */
async function isSettled(promise: Promise<void>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
  return settled;
}

t.test("nothing in flight: settled at once", async (t) => {
  const inFlight = new InFlightRequests();
  t.equal(inFlight.count, 0);
  t.ok(await isSettled(inFlight.settled()));
});

t.test("waits for the requests begun before the line, not for those after it", async (t) => {
  const inFlight = new InFlightRequests();
  const first = inFlight.begin();
  const second = inFlight.begin();
  const line = inFlight.settled();
  const late = inFlight.begin();
  t.equal(inFlight.count, 3);
  inFlight.end(first);
  t.notOk(await isSettled(line), "one of the two still runs");
  inFlight.end(second);
  t.ok(await isSettled(line), "both ended; the late one does not hold the line");
  t.equal(inFlight.count, 1);
  inFlight.end(late);
  t.equal(inFlight.count, 0);
});

t.test("two lines: each waits for its own era and the older ones", async (t) => {
  const inFlight = new InFlightRequests();
  const a = inFlight.begin();
  const firstLine = inFlight.settled();
  const b = inFlight.begin();
  const secondLine = inFlight.settled();
  inFlight.end(b);
  t.notOk(await isSettled(secondLine), "a (older) still runs");
  t.notOk(await isSettled(firstLine));
  inFlight.end(a);
  t.ok(await isSettled(firstLine));
  t.ok(await isSettled(secondLine));
  t.equal(inFlight.count, 0);
});

t.test("a line drawn with nothing of the current era in flight does not wait for older eras that are empty", async (t) => {
  const inFlight = new InFlightRequests();
  inFlight.end(inFlight.begin());
  t.ok(await isSettled(inFlight.settled()));
  const c = inFlight.begin();
  t.notOk(await isSettled(inFlight.settled()));
  inFlight.end(c);
  t.equal(inFlight.count, 0);
});
