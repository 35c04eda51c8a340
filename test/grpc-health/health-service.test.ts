// The gRPC health service over a real ReadinessCheck with a counted scanner, a clock and timers moved by hand: Check, Watch, the drain, the close, one scan per TTL.
import t from "tap";
import { frameMessage } from "../../src/grpc/message-framing.js";
import { encodeHealthCheckRequest, HEALTH_CHECK_PATH, HEALTH_WATCH_PATH, SERVING_STATUS } from "../../src/grpc/health-messages.js";
import { GrpcHealthService, healthMethodOf } from "../../src/grpc-health/health-service.js";
import { GRPC_STATUS } from "../../src/grpc/grpc-status.js";
import { ReadinessCheck } from "../../src/readiness/readiness-check.js";
import { captureLog } from "../helpers/log-capture.js";
import { CountingScanner, ManualScheduler, RecordingResponder } from "../helpers/grpc-doubles.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const { SERVING, NOT_SERVING } = SERVING_STATUS;
const TTL = 1000;

function setUp(requiredPorts: number[] = [8000, 15008]) {
  const clock = new ManualTimers(1000);
  const scanner = new CountingScanner();
  const scheduler = new ManualScheduler();
  const drain = { draining: false };
  const readiness = new ReadinessCheck({ requiredPorts, scanner, log: captureLog().log, ttlMs: TTL, clock });
  const service = new GrpcHealthService({ readiness, drain, ttlMs: TTL, scheduler });
  return { clock, scanner, scheduler, drain, readiness, service };
}

const request = (service: string) => frameMessage(encodeHealthCheckRequest(service));
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

t.test("healthMethodOf: POST, the exact path, a gRPC content-type", async (t) => {
  t.equal(healthMethodOf("POST", HEALTH_CHECK_PATH, "application/grpc"), "Check");
  t.equal(healthMethodOf("POST", HEALTH_WATCH_PATH, "application/grpc+proto"), "Watch");
  t.equal(healthMethodOf("GET", HEALTH_CHECK_PATH, "application/grpc"), undefined);
  t.equal(healthMethodOf("POST", HEALTH_CHECK_PATH, "application/json"), undefined);
  t.equal(healthMethodOf("POST", "/grpc.health.v1.Health/List", "application/grpc"), undefined, "List is the app's");
  t.equal(healthMethodOf("POST", `${HEALTH_CHECK_PATH}/`, "application/grpc"), undefined);
  t.equal(healthMethodOf("POST", HEALTH_CHECK_PATH, "application/grpc-web+proto"), undefined, "grpc-web's answers are framed otherwise: the app's");
});

t.test("Check: headers, one message, grpc-status 0; each service from the same cached run", async (t) => {
  const { scanner, service } = setUp();
  scanner.listening = new Set([8000]);
  const cases: ReadonlyArray<readonly [string, number]> = [
    ["", NOT_SERVING],
    ["readyz", NOT_SERVING],
    ["livez", SERVING],
    ["healthz", SERVING],
    ["listener-8000", SERVING],
    ["listener-15008", NOT_SERVING],
    ["shutdown", SERVING],
  ];
  for (const [name, status] of cases) {
    const responder = new RecordingResponder();
    t.ok(service.answer("Check", request(name), responder), `${JSON.stringify(name)} is ours`);
    await settle();
    t.same(responder.events, [{ kind: "headers" }, { kind: "message", status }, { kind: "trailers", grpcStatus: 0, message: undefined }], JSON.stringify(name));
  }
  t.equal(scanner.scans, 1, "one scan for all of them");
});

t.test("other services are the app's: nothing sent", async (t) => {
  const { service } = setUp();
  for (const name of ["my.app.Service", "READYZ", "listener-9999", "upstream", " readyz"]) {
    const responder = new RecordingResponder();
    t.notOk(service.answer("Check", request(name), responder), name);
    t.notOk(service.answer("Watch", request(name), responder), name);
    t.same(responder.events, [], `${name}: untouched`);
  }
});

t.test("a body that is no HealthCheckRequest: trailers-only grpc-status 3; compressed: 12", async (t) => {
  const { service } = setUp();
  const bodies: ReadonlyArray<readonly [string, Buffer, number]> = [
    ["empty body", Buffer.alloc(0), GRPC_STATUS.INVALID_ARGUMENT],
    ["a truncated varint", frameMessage(Buffer.from([0x0a, 0x80])), GRPC_STATUS.INVALID_ARGUMENT],
    ["wire type 7", frameMessage(Buffer.from([0x0f])), GRPC_STATUS.INVALID_ARGUMENT],
    ["two messages", Buffer.concat([request(""), request("")]), GRPC_STATUS.INVALID_ARGUMENT],
    ["compressed", Buffer.concat([Buffer.from([1]), request("").subarray(1)]), GRPC_STATUS.UNIMPLEMENTED],
  ];
  for (const [name, body, status] of bodies) {
    const responder = new RecordingResponder();
    t.ok(service.answer("Check", body, responder), name);
    t.equal(responder.events.length, 1, name);
    t.match(responder.events[0], { kind: "trailersOnly", grpcStatus: status }, name);
  }
});

t.test("Check while draining: readiness and shutdown NOT_SERVING, liveness and listeners unchanged", async (t) => {
  const { scanner, service, drain } = setUp([8000]);
  scanner.listening = new Set([8000]);
  drain.draining = true;
  for (const [name, status] of [["", NOT_SERVING], ["shutdown", NOT_SERVING], ["livez", SERVING], ["listener-8000", SERVING]] as const) {
    const responder = new RecordingResponder();
    service.answer("Check", request(name), responder);
    await settle();
    t.same(responder.statuses, [status], name);
  }
});

t.test("Watch: the status at once, again on each change only, NOT_SERVING at the drain, ended with grpc-status 0 at the close", async (t) => {
  const { clock, scanner, scheduler, service, drain } = setUp([8000]);
  const readyz = new RecordingResponder();
  const livez = new RecordingResponder();
  service.answer("Watch", request(""), readyz);
  service.answer("Watch", request("livez"), livez);
  await settle();
  t.same(readyz.statuses, [NOT_SERVING], "the first status as soon as the first run settles");
  t.same(livez.statuses, [SERVING]);
  t.equal(scheduler.pending, 1, "one poll timer");

  clock.time += TTL;
  scheduler.runAll();
  await settle();
  t.same(readyz.statuses, [NOT_SERVING], "no change: nothing sent");
  t.equal(scanner.scans, 2);

  scanner.listening = new Set([8000]);
  clock.time += TTL;
  scheduler.runAll();
  await settle();
  t.same(readyz.statuses, [NOT_SERVING, SERVING], "the change, at the next poll");

  drain.draining = true;
  service.drainBegan();
  t.same(readyz.statuses, [NOT_SERVING, SERVING, NOT_SERVING], "NOT_SERVING the moment the drain begins");
  t.same(livez.statuses, [SERVING], "liveness is untouched by the drain");

  service.close();
  t.match(readyz.events.at(-1), { kind: "trailers", grpcStatus: 0 });
  t.match(livez.events.at(-1), { kind: "trailers", grpcStatus: 0 });
  t.equal(scheduler.pending, 0, "no poll after the close");
  t.equal(service.watchers.size, 0);
});

t.test("1,000 watchers and 1,000 checks: one scan per TTL, one timer", async (t) => {
  const { clock, scanner, scheduler, service } = setUp([8000]);
  const watchers = Array.from({ length: 1000 }, () => new RecordingResponder());
  for (const watcher of watchers) service.answer("Watch", request(""), watcher);
  for (let index = 0; index < 1000; index++) service.answer("Check", request(index % 2 ? "readyz" : "listener-8000"), new RecordingResponder());
  await settle();
  t.equal(scanner.scans, 1);
  t.equal(scheduler.pending, 1);
  for (let round = 0; round < 5; round++) {
    if (round === 3) scanner.listening = new Set([8000]);
    clock.time += TTL;
    scheduler.runAll();
    await settle();
    t.equal(scheduler.pending, 1, "still one timer");
  }
  t.equal(scanner.scans, 6, "one scan per TTL");
  t.ok(watchers.every((watcher) => watcher.statuses.join() === `${NOT_SERVING},${SERVING}`), "every watcher saw the one change once");
});

t.test("the poll runs only while a watcher follows readiness", async (t) => {
  const { clock, scanner, scheduler, service } = setUp([8000]);
  const livez = new RecordingResponder();
  service.answer("Watch", request("livez"), livez);
  t.equal(scheduler.pending, 0, "liveness needs no poll");
  const a = new RecordingResponder();
  const b = new RecordingResponder();
  service.answer("Watch", request("readyz"), a);
  service.answer("Watch", request("listener-8000"), b);
  await settle();
  t.equal(scheduler.pending, 1);
  a.close();
  t.equal(scheduler.pending, 1, "b still watches");
  b.close();
  t.equal(scheduler.pending, 0, "the last readiness watcher gone: the timer is cleared");
  clock.time += TTL;
  const scans = scanner.scans;
  scheduler.runAll();
  await settle();
  t.equal(scanner.scans, scans, "and nothing scans");
  const c = new RecordingResponder();
  service.answer("Watch", request(""), c);
  await settle();
  t.equal(scheduler.pending, 1, "a new watcher starts it again, once");
});

t.test("a stopped reader holds one status, the latest; the rest is dropped", async (t) => {
  const { clock, scanner, scheduler, service } = setUp([8000]);
  const slow = new RecordingResponder();
  service.answer("Watch", request(""), slow);
  await settle();
  slow.buffering = true;
  for (const listening of [[8000], [], [8000], []]) {
    scanner.listening = new Set(listening);
    clock.time += TTL;
    scheduler.runAll();
    await settle();
  }
  t.same(slow.statuses, [NOT_SERVING, SERVING], "one message went out before the window filled");
  scanner.listening = new Set([8000]);
  clock.time += TTL;
  scheduler.runAll();
  await settle();
  slow.writable();
  t.same(slow.statuses, [NOT_SERVING, SERVING], "the latest (SERVING) equals the last sent: nothing more");
  scanner.listening = new Set();
  clock.time += TTL;
  scheduler.runAll();
  await settle();
  t.same(slow.statuses, [NOT_SERVING, SERVING, NOT_SERVING]);
});

t.test("a Watch after the close gets its status and ends", async (t) => {
  const { service } = setUp([]);
  service.close();
  const late = new RecordingResponder();
  service.answer("Watch", request("livez"), late);
  t.same(late.events, [{ kind: "headers" }, { kind: "message", status: SERVING }, { kind: "trailers", grpcStatus: 0, message: undefined }]);
});

t.test("a body over 1 KiB is the app's, whatever it names", async (t) => {
  const { service } = setUp([]);
  const padded = frameMessage(Buffer.concat([encodeHealthCheckRequest("readyz"), Buffer.from([0x12, 0x88, 0x08]), Buffer.alloc(1032)]));
  const responder = new RecordingResponder();
  t.notOk(service.answer("Check", padded, responder));
  t.same(responder.events, []);
});
