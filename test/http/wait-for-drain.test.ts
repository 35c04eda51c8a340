// WaitForDrain (GET /wait-for-drain's answer): waits for a drain to begin (at most 5 s, injected here), its delay, and the requests in flight; never longer.
import t from "tap";
import { InFlightRequests } from "../../src/relay/in-flight.js";
import { DRAIN_BEGIN_WAIT_MS, WaitForDrain } from "../../src/http/wait-for-drain.js";
import { deferred, ManualTimers as BaseTimers } from "../helpers/test-doubles.js";

/** ManualTimers whose advance also lets the promises it settled run. */
class ManualTimers extends BaseTimers {
  async tick(ms: number): Promise<void> {
    this.advance(ms);
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
}

function setUp() {
  const began = deferred();
  const delay = deferred();
  const timers = new ManualTimers();
  const inFlight = new InFlightRequests();
  const answers: string[] = [];
  const waitForDrain = new WaitForDrain({ progress: { began: began.promise, delayPassed: () => delay.promise }, inFlight, timeoutMs: 20_000, timers });
  const ask = () => waitForDrain.answer({ send: (status, _headers, body) => answers.push(`${status} ${body.toString()}`) });
  return { began, delay, timers, inFlight, answers, ask };
}

t.test("the contract's 5 s", async (t) => {
  t.equal(DRAIN_BEGIN_WAIT_MS, 5_000);
});

t.test("no drain begins: {drained:false} after 5 s, not before (an app restarted alone is never held)", async (t) => {
  const { timers, answers, ask } = setUp();
  ask();
  await timers.tick(4_999);
  t.same(answers, []);
  await timers.tick(1);
  t.same(answers, ['200 {"drained":false}']);
  t.equal(timers.pending, 0, "no timer left behind");
});

t.test("a drain that begins within the 5 s: answered once its delay passed and the requests in flight then ended", async (t) => {
  const { began, delay, timers, inFlight, answers, ask } = setUp();
  const before = inFlight.begin();
  ask();
  await timers.tick(2_000);
  began.resolve();
  await flush();
  const during = inFlight.begin();
  t.same(answers, [], "the delay has not passed");
  delay.resolve();
  await flush();
  const late = inFlight.begin();
  inFlight.end(before);
  await flush();
  t.same(answers, [], "a request begun during the delay still runs");
  inFlight.end(during);
  await flush();
  t.same(answers, ['200 {"drained":true}'], "the late request (after the delay) does not hold the app");
  inFlight.end(late);
});

t.test("requests that outlast --shutdown-timeout: {drained:false} after it, never later", async (t) => {
  const { began, delay, timers, inFlight, answers, ask } = setUp();
  inFlight.begin();
  began.resolve();
  delay.resolve();
  ask();
  await flush();
  await timers.tick(19_999);
  t.same(answers, []);
  await timers.tick(1);
  t.same(answers, ['200 {"drained":false}']);
});

t.test("asked after the drain is over: at once", async (t) => {
  const { began, delay, answers, ask } = setUp();
  began.resolve();
  delay.resolve();
  ask();
  await flush();
  t.same(answers, ['200 {"drained":true}']);
});
