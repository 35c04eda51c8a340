// The x64 image run by podman: its version, the non-root read-only posture, the kernel's listener check from inside, a drain on podman stop, start-up time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { hasPython, holdPort } from "../helpers/port-holder.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { messages, podmanUnavailable, startPodman, waitFor, type Podman } from "./podman.js";

const embeddedVersion = (JSON.parse(readFileSync(join(import.meta.dirname, `../../node_modules/node-linux-${process.arch}/package.json`), "utf8")) as { version: string }).version;
const unavailable = podmanUnavailable();
// Podman on vfs storage is slow on a busy 2-core machine (app-image.test.ts took 116 s there, near
// .taprc's 120 s); every wait inside is bounded on its own.
t.setTimeout(240_000);
if (unavailable) t.comment(`skipping the image tests: ${unavailable}`);

/** `podman run -d` of the image on the host's network, listening on a free loopback port; waits for /health. */
async function runProxy(podman: Podman, image: string, flags: string[], runOptions: string[] = []) {
  const port = await closedPort();
  const id = await podman.must(["run", "--detach", "--network", "host", ...runOptions, image, "--listen", `127.0.0.1:${port}`, ...flags]);
  await waitFor("the container's /health", 20_000, async () => ((await send(port, "/health")).status === 200 ? true : undefined));
  return { id, port };
}

/** The `Uid:` and `CapEff:` lines of a host process, as the kernel reports them. */
function credentialsOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { uids: /^Uid:\s+(.+)$/m.exec(status)?.[1]?.split(/\s+/).map(Number), capEff: /^CapEff:\s+(\w+)$/m.exec(status)?.[1] };
}

t.test("the image under podman", { skip: unavailable }, async (t) => {
  const podman = startPodman(t);
  const image = await podman.loadImage();

  t.test("--version: the release binary of this architecture", async (t) => {
    const result = await podman.run(["run", "--rm", "--network", "host", image, "--version"]);
    t.equal(result.code, 0);
    t.equal(result.stdout, `readiness-proxy 0.1.0 (node v${embeddedVersion}, linux-${process.arch})\n`);
  });

  t.test("read-only root, every capability dropped, user 65532: /health and /readyz answer; no shell to exec", async (t) => {
    const { id, port } = await runProxy(podman, image, [], ["--read-only", "--cap-drop", "ALL", "--user", "65532"]);
    t.equal((await send(port, "/health")).text(), '{"status":"ok"}');
    const readyz = await send(port, "/readyz");
    t.equal(readyz.status, 200);
    t.equal(readyz.text(), '{"status":"ready"}');
    t.equal(await podman.must(["inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", id]), "true");
    // PID 1 (tini) and its child (readiness-proxy), seen from the host: uid 65532, no effective capability.
    const tini = Number(await podman.must(["inspect", "--format", "{{.State.Pid}}", id]));
    const proxy = Number(readFileSync(`/proc/${tini}/task/${tini}/children`, "utf8").trim().split(/\s+/)[0]);
    for (const [name, pid] of [["tini", tini], ["readiness-proxy", proxy]] as const) {
      t.same(credentialsOf(pid), { uids: [65532, 65532, 65532, 65532], capEff: "0000000000000000" }, `${name} runs as 65532 with no capability`);
    }
    t.match(readFileSync(`/proc/${proxy}/cmdline`, "utf8").split("\0")[0], "/readiness-proxy");
    const shell = await podman.run(["exec", id, "/bin/sh", "-c", "true"]);
    t.not(shell.code, 0, "there is no /bin/sh to exec");
    t.match(shell.stderr, /no such file|not found/i);
  });

  t.test("a required listener missing: 503, then 200 once a socket listens on that port (read from inside the container)", { skip: !hasPython() && "needs python3 to bind without listening" }, async (t) => {
    const holder = await holdPort(t, { family: 4 });
    const { port } = await runProxy(podman, image, ["--readiness-required-listener", String(holder.port), "--readiness-cache-ttl", "0s"], ["--read-only", "--cap-drop", "ALL"]);
    const before = await send(port, "/readyz");
    t.equal(before.status, 503);
    t.same(before.json(), { status: "not ready", missingListeners: [holder.port], failedChecks: [`listener-${holder.port}`] });
    await holder.listen();
    const after = await send(port, "/readyz");
    t.equal(after.status, 200);
    t.equal(after.text(), '{"status":"ready"}');
  });

  t.test("podman stop: /readyz reports draining during the delay, then exit 0; the log says draining, then stopped", async (t) => {
    const { id, port } = await runProxy(podman, image, ["--shutdown-delay", "2s"], ["--read-only", "--cap-drop", "ALL"]);
    const stopped = podman.run(["stop", "--time", "10", id]);
    const draining = await waitFor("/readyz draining", 5_000, async () => {
      const reply = await send(port, "/readyz");
      return reply.status === 503 ? reply.json() : undefined;
    });
    t.same(draining, { status: "not ready", draining: true, failedChecks: ["shutdown"] });
    t.equal((await stopped).code, 0, "podman stop returned");
    t.equal(await podman.must(["wait", id]), "0", "podman wait: exit code 0");
    t.equal(await podman.exitCode(id), 0);
    const { records, stderr } = await podman.logs(id);
    t.equal(stderr, "");
    // No check is configured here (no required port, no app path), and the start says so.
    t.same(messages(records), ["listening", "no readiness checks configured; /readyz always reports ready", "draining", "stopped"]);
    t.match(records[2], { reason: "SIGTERM", shutdownDelayMs: 2000 }, "tini passed podman's SIGTERM to the proxy");
    t.match(records[3], { cutShort: false });
  });

  t.test("start to first /health: the container (create and start, or start alone) against the bare binary (printed, not asserted)", async (t) => {
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const runs = { run: [] as number[], start: [] as number[], binary: [] as number[] };
    for (let round = 0; round < 3; round++) {
      let started = performance.now();
      const { id } = await runProxy(podman, image, []);
      runs.run.push(performance.now() - started);
      await podman.must(["stop", "--time", "10", id]);
      started = performance.now();
      await podman.must(["start", id]);
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(await podman.must(["inspect", "--format", "{{.Config.Cmd}}", id]))?.[1]);
      await waitFor("/health after podman start", 20_000, async () => ((await send(port, "/health")).status === 200 ? true : undefined));
      runs.start.push(performance.now() - started);
      await podman.must(["rm", "--force", "--time", "10", id]);
      started = performance.now();
      const daemon = await spawnDaemon(t, [BINARY], []);
      t.equal((await send(daemon.port, "/health")).status, 200);
      runs.binary.push(performance.now() - started);
      daemon.child.kill("SIGTERM");
      await daemon.exited;
    }
    const show = (values: number[]) => `median ${median(values).toFixed(0)} ms (${values.map((ms) => ms.toFixed(0)).join(", ")})`;
    t.comment(`podman run -d to first /health: ${show(runs.run)}`);
    t.comment(`podman start to first /health: ${show(runs.start)}`);
    t.comment(`the binary, exec to first /health: ${show(runs.binary)}`);
  });
});
