// The entrypoint form's §14 parts against the built binary: the start gate (a port made to listen by a helper process, the app's start seen from outside) and --app-stop-signal.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { hasPython, holdPort } from "../helpers/port-holder.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const APP = join(import.meta.dirname, "../helpers/lifecycle-app.mjs");
const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built ? "the binary is not built: run make build" : !hasPython() ? "python3 is needed for the port holder" : false;

/** The app's command line and the marker file it writes once it listens. */
async function appCommand(t: Test) {
  const appPort = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), "rp-gate-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const marker = join(dir, "app-started");
  return { appPort, marker, argv: ["--upstream", `http://127.0.0.1:${appPort}`, "--", process.execPath, APP, String(appPort), marker] };
}

const messages = (daemon: SpawnedDaemon) => daemon.records.map((record) => record.msg);

t.test("start gate: the app is held while a required port is missing, and started once it listens", { skip }, async (t) => {
  const holder = await holdPort(t);
  const { marker, argv } = await appCommand(t);
  const daemon = await spawnDaemon(t, binary.command, ["--readiness-required-listener", String(holder.port), "--app-start-wait", "30s", "--readiness-cache-ttl", "200ms", ...argv]);
  t.match(await daemon.waitForLog("holding the app until required listeners listen"), { level: 30, missing: [holder.port] });
  // While held: liveness passes, readiness fails as usual, a proxied request is the 502 of an app that does not listen.
  t.equal((await send(daemon.port, "/healthz")).status, 200);
  const readyz = await send(daemon.port, "/readyz");
  t.equal(readyz.status, 503);
  t.ok((readyz.json() as { missingListeners: number[] }).missingListeners.includes(holder.port), "the required port is reported missing");
  t.equal((await send(daemon.port, "/anything")).status, 502);
  t.notOk(existsSync(marker), "the app was not started");
  t.notOk(messages(daemon).includes("app started"));

  await holder.listen();
  await daemon.waitForLog("app listening");
  t.ok(existsSync(marker), "the app started once the port listened");
  const order = ["listening", "holding the app until required listeners listen", "app started", "app listening"].map((msg) => messages(daemon).indexOf(msg));
  t.same([...order].sort((a, b) => a - b), order, `in order: ${order.join(" < ")}`);
  t.notOk(messages(daemon).includes("required listeners still missing; starting the app"));
  t.equal(messages(daemon).filter((msg) => msg === "holding the app until required listeners listen").length, 1, "the hold line once");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("start gate: the wait runs out, the app starts anyway with the warn line and /readyz keeps the pod out", { skip }, async (t) => {
  const holder = await holdPort(t);
  const { marker, argv } = await appCommand(t);
  const daemon = await spawnDaemon(t, binary.command, ["--readiness-required-listener", String(holder.port), "--app-start-wait", "300ms", "--readiness-cache-ttl", "100ms", ...argv]);
  t.match(await daemon.waitForLog("required listeners still missing; starting the app"), { level: 40, missing: [holder.port] });
  await daemon.waitForLog("app listening");
  t.ok(existsSync(marker));
  const readyz = await send(daemon.port, "/readyz");
  t.equal(readyz.status, 503);
  // The app's own port may still read missing from a result cached before it listened (the TTL): the rule is the held port's.
  const failed = (readyz.json() as { failedChecks: string[] }).failedChecks;
  t.ok(failed.includes(`listener-${holder.port}`), `the missing required port keeps the pod out (${failed.join(", ")})`);
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("start gate, fatal: exit 1 with one line, the app never started", { skip }, async (t) => {
  const holder = await holdPort(t);
  const { marker, argv } = await appCommand(t);
  const run = await runToExit([binary.command[0]!, "--listen", "127.0.0.1:0", "--readiness-required-listener", String(holder.port), "--app-start-wait", "300ms", "--app-start-wait-fatal", ...argv]);
  t.equal(run.code, 1);
  t.equal(run.stderr, `error: required listeners still missing after 300ms: ${holder.port}\n`);
  t.notOk(existsSync(marker), "the app was never started");
  t.match(run.stdout, /holding the app until required listeners listen/);
  t.notMatch(run.stdout, /app started/);
});

t.test("start gate: SIGTERM while held exits 0 at once, no app", { skip }, async (t) => {
  const holder = await holdPort(t);
  const { marker, argv } = await appCommand(t);
  const daemon = await spawnDaemon(t, binary.command, ["--readiness-required-listener", String(holder.port), "--app-start-wait", "10m", "--shutdown-delay", "10m", ...argv]);
  await daemon.waitForLog("holding the app until required listeners listen");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0, "no shutdown delay: nothing was started");
  t.notOk(existsSync(marker));
  t.notOk(messages(daemon).includes("app started"));
  t.notOk(messages(daemon).includes("draining"));
});

t.test("--app-stop-signal SIGQUIT reaches an app that counts its signals, once, after the drain", { skip }, async (t) => {
  const { argv } = await appCommand(t);
  const daemon = await spawnDaemon(t, binary.command, ["--app-stop-signal", "QUIT", ...argv]);
  await daemon.waitForLog("app listening");
  daemon.child.kill("SIGTERM");
  t.match(await daemon.waitForLog("stopping app"), { signal: "SIGQUIT" });
  t.match(await daemon.waitForLog("app got signal"), { signal: "SIGQUIT", count: 1 });
  t.equal(await daemon.exited, 0, "the app's own exit code");
  t.equal(daemon.records.filter((record) => record.msg === "app got signal").length, 1, "one signal, not SIGTERM as well");
  const order = ["draining", "stopping app", "app got signal", "app exited", "stopped"].map((msg) => messages(daemon).indexOf(msg));
  t.same([...order].sort((a, b) => a - b), order, `in order: ${order.join(" < ")}`);
});

t.test("--app-stop-signal that does not stop the app: a second SIGTERM still sends SIGKILL", { skip }, async (t) => {
  const { argv } = await appCommand(t);
  const daemon = await spawnDaemon(t, binary.command, ["--app-stop-signal", "SIGUSR1", "--app-stop-timeout", "1m", ...argv]);
  await daemon.waitForLog("app listening");
  daemon.child.kill("SIGTERM");
  t.match(await daemon.waitForLog("app got signal"), { signal: "SIGUSR1", count: 1 });
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 137, "the app died of SIGKILL");
  t.match(daemon.records.find((record) => record.msg === "app exited"), { signal: "SIGKILL" });
});
