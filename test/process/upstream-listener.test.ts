// The entrypoint form against the built program: the upstream's own loopback port is a required listener by default, at the address the proxy connects to, so /readyz is 503 until the app listens there; --readiness-upstream-listener off, and the sidecar form, keep the old rule.
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const APP = join(import.meta.dirname, "late-listening-app.mjs");

/** Why python3's http.server on [::1] cannot be run here, or false. */
async function noIpv6LoopbackPython(): Promise<string | false> {
  if (spawnSync("python3", ["--version"]).status !== 0) return "python3 is not installed";
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => server.once("error", () => resolve(false)).listen(0, "::1", () => resolve(true)));
  server.close();
  return bound ? false : "this machine has no IPv6 loopback (::1)";
}
const pythonOnIpv6Loopback = await noIpv6LoopbackPython();

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: the upstream listener`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    /** The proxy in front of an app that listens on GET /listen of its control port; the cache off, so each /readyz scans. */
    async function startWithLateApp(t: Test, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
      const [appPort, controlPort] = [await closedPort(), await closedPort()];
      const argv = ["--upstream", `http://127.0.0.1:${appPort}`, "--readiness-cache-ttl", "0s", ...args, "--", process.execPath, APP, String(appPort), String(controlPort)];
      const daemon = await spawnDaemon(t, artifact.command, argv, { env: { PATH: process.env.PATH, ...env } });
      await daemon.waitForLog("app control ready");
      t.teardown(() => {
        if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
        return daemon.exited.then(() => undefined);
      });
      return { daemon, appPort, listen: () => send(controlPort, "/listen") };
    }

    t.test("by default: 503 listener-<port> while the app starts, 200 once it listens", async (t) => {
      const { daemon, appPort, listen } = await startWithLateApp(t);
      t.match(daemon.records.find((record) => record.msg === "listening"), { requiredListeners: [appPort] });
      const before = await send(daemon.port, "/readyz");
      t.equal(before.status, 503);
      t.same(before.json(), { status: "not ready", missingListeners: [appPort], failedChecks: [`listener-${appPort}`] });
      t.equal((await send(daemon.port, `/readyz/listener-${appPort}`)).text(), `listener-${appPort} failed: not listening\n`);
      t.equal((await send(daemon.port, "/anything")).status, 502, "what the kubelet would have published: every request 502");
      t.equal((await listen()).text(), "listening");
      const after = await send(daemon.port, "/readyz");
      t.equal(after.status, 200);
      t.equal(after.text(), '{"status":"ready"}');
      t.equal((await send(daemon.port, "/anything")).text(), "app /anything");
      t.notOk(daemon.records.some((record) => record.msg === "no readiness checks configured; /readyz always reports ready"));
    });

    t.test("python3 -m http.server --bind ::1 behind http://127.0.0.1: listening, but not where the proxy connects, so not ready", { skip: pythonOnIpv6Loopback }, async (t) => {
      const appPort = await closedPort();
      // Its stdout to stderr: the proxy's stdout is JSON lines only.
      const app = ["sh", "-c", 'exec python3 -u -m http.server "$1" --bind ::1 1>&2', "sh", String(appPort)];
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--readiness-cache-ttl", "0s", "--", ...app]);
      t.teardown(() => {
        if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
        return daemon.exited.then(() => undefined);
      });
      const unreachableLine = () => daemon.records.find((record) => record.msg === "required listeners missing; reporting not ready" && Array.isArray(record.unreachable));
      // Probes drive the check (the cache is off); bounded: 200 probes 25 ms apart.
      for (let probe = 0; probe < 200 && !unreachableLine(); probe++) {
        await send(daemon.port, "/readyz");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      t.match(daemon.stderr(), `Serving HTTP on ::1 port ${appPort}`, "the app does listen, on [::1]");
      const readyz = await send(daemon.port, "/readyz");
      t.equal(readyz.status, 503);
      t.same(readyz.json(), { status: "not ready", missingListeners: [appPort], failedChecks: [`listener-${appPort}`] });
      t.equal((await send(daemon.port, "/readyz?verbose")).text(), `[-]listener-${appPort} failed: not listening\n[+]shutdown ok\nreadyz check failed\n`, "the public reason stays short and fixed");
      t.equal((await send(daemon.port, "/anything")).status, 502, "what the kubelet would have published: every request 502");
      t.match(unreachableLine(), { level: 40, ports: [appPort], missing: [appPort], unreachable: [`[::1]:${appPort}`] }, "the log names where it does listen, at once");
      // The first probe may come before python listens (the info line first) or after (the warning
      // alone): which, the machine decides. The rule holds either way.
      const missing = daemon.records.filter((record) => record.msg === "required listeners missing; reporting not ready");
      t.match(missing.at(-1), { level: 40, unreachable: [`[::1]:${appPort}`] }, "listening out of reach is a warning at once");
      const before = missing.slice(0, -1);
      t.ok(before.length <= 1 && before.every((record) => record.level === 30 && record.unreachable === undefined), "before it, at most the start's not-listening line, at info");
      t.notOk(daemon.records.some((record) => String(record.msg).includes("reporting ready")), "never reported ready");
    });

    t.test("the same app behind http://[::1]: ready, and served", { skip: pythonOnIpv6Loopback }, async (t) => {
      const appPort = await closedPort();
      const app = ["sh", "-c", 'exec python3 -u -m http.server "$1" --bind ::1 1>&2', "sh", String(appPort)];
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", `http://[::1]:${appPort}`, "--readiness-cache-ttl", "0s", "--", ...app]);
      t.teardown(() => {
        if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
        return daemon.exited.then(() => undefined);
      });
      let status = 0;
      for (let probe = 0; probe < 200 && status !== 200; probe++) {
        status = (await send(daemon.port, "/readyz")).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      t.equal(status, 200, "ready once it listens on [::1]");
      t.equal((await send(daemon.port, "/")).status, 200, "and the proxy reaches it");
      // The first probe may come before python listens (a missing line first) or after (none): which, the machine decides.
      const states = daemon.records.filter((record) => String(record.msg).startsWith("required listeners"));
      t.match(states.at(-1), { msg: "required listeners present; reporting ready" }, "ready is logged once it listens");
      const before = states.slice(0, -1);
      t.ok(before.length <= 1 && before.every((record) => record.msg === "required listeners missing; reporting not ready" && record.level === 30), "before it, at most the start's missing line, at info");
    });

    t.test("a port the operator already requires is one check, not two", async (t) => {
      const { daemon, appPort } = await startWithLateApp(t, ["--readiness-required-listener", "1"]);
      const listening = daemon.records.find((record) => record.msg === "listening")!;
      t.same(listening.requiredListeners, [1, appPort].sort((a, b) => a - b));
      const again = await spawnDaemon(t, artifact.command, ["--upstream", `http://localhost:${appPort}`, `--readiness-required-listener=${appPort}`, "--", process.execPath, "-e", "setInterval(() => {}, 1000)"]);
      t.same(again.records.find((record) => record.msg === "listening")!.requiredListeners, [appPort], "localhost counts as loopback; the port once");
      again.child.kill("SIGTERM");
      await again.exited;
    });

    for (const [how, args, env] of [
      ["--readiness-upstream-listener off", ["--readiness-upstream-listener", "off"], {}],
      ["READINESS_PROXY_UPSTREAM_LISTENER=off", [], { READINESS_PROXY_UPSTREAM_LISTENER: "off" }],
    ] as const) {
      t.test(`${how}: 200 before the app listens, and the start says no check is configured`, async (t) => {
        const { daemon } = await startWithLateApp(t, [...args], env);
        t.match(daemon.records.find((record) => record.msg === "listening"), { requiredListeners: [] });
        t.equal((await send(daemon.port, "/readyz")).status, 200);
        t.match(await daemon.waitForLog("no readiness checks configured; /readyz always reports ready"), { level: 40 });
      });
    }

    t.test("the sidecar form requires nothing by default, and warns once at start", async (t) => {
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
      t.match(daemon.records.find((record) => record.msg === "listening"), { requiredListeners: [] });
      t.equal((await send(daemon.port, "/readyz")).status, 200);
      await daemon.waitForLog("no readiness checks configured; /readyz always reports ready");
      t.equal(daemon.records.filter((record) => record.msg === "no readiness checks configured; /readyz always reports ready").length, 1);
      const withCheck = await spawnDaemon(t, artifact.command, ["--readiness-upstream-path", "/ready"]);
      t.notOk(withCheck.records.some((record) => record.msg === "no readiness checks configured; /readyz always reports ready"), "an upstream check is a check");
    });
  });
}
