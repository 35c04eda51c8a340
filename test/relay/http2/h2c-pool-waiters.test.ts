// The h2c pool's waiters (issue 37.4): one that gives up leaves the pool's queue, and a connection whose SETTINGS never come is closed with its waiters failed.
import t from "tap";
import { H2cPool, SETTINGS_TIMEOUT_CODE, type H2cSessionUser } from "../../../src/relay/http2/h2c-pool.js";
import { startSilentApp } from "../../helpers/silent-app.js";

function user(): H2cSessionUser & { failures: Array<Error & { code?: string }>; sessions: number; failed: Promise<void> } {
  let failedNow = () => {};
  const failed = new Promise<void>((resolve) => (failedNow = resolve));
  const failures: Array<Error & { code?: string }> = [];
  const self = {
    failures,
    sessions: 0,
    failed,
    onSession: () => void self.sessions++,
    onSessionFailure: (error: Error & { code?: string }) => {
      failures.push(error);
      failedNow();
    },
  };
  return self;
}

t.test("waiters that give up leave the pool: 250 of them open one connection, not three", async (t) => {
  const app = await startSilentApp(t);
  const pool = new H2cPool({ host: "127.0.0.1", port: app.port, idleTimeoutMs: 4_000, settingsTimeoutMs: 60_000 });
  t.teardown(() => pool.close());
  for (let index = 0; index < 250; index++) {
    const gaveUp = user();
    pool.acquire(gaveUp);
    pool.forget(gaveUp);
  }
  await app.settle();
  t.equal(app.accepted(), 1, "one connection to the app");
});

t.test("a connection whose SETTINGS never come is closed, and its waiters fail with a timeout", async (t) => {
  const app = await startSilentApp(t);
  const pool = new H2cPool({ host: "127.0.0.1", port: app.port, idleTimeoutMs: 4_000, settingsTimeoutMs: 50 });
  t.teardown(() => pool.close());
  const waiters = [user(), user()];
  for (const waiter of waiters) pool.acquire(waiter);
  await Promise.all(waiters.map((waiter) => waiter.failed));
  for (const waiter of waiters) t.equal(waiter.failures[0]?.code, SETTINGS_TIMEOUT_CODE, "failed with the timeout's code");
  await app.settle();
  await app.closed(0);
  t.pass("the connection to the app was closed");
  t.equal(waiters.reduce((sum, waiter) => sum + waiter.sessions, 0), 0, "nobody was handed the session");
});
