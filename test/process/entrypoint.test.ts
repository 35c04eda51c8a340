// The entrypoint form against the built program: a real app is started after the listener, stopped after the drain, and its exit code is ours.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, inspectorPortAccepts, runToExit, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const APP = join(import.meta.dirname, "../helpers/recording-app.mjs");

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: entrypoint form`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    /** Starts the proxy in front of a recording app on a free port, and waits until the app serves. */
    async function startWithApp(t: Test, mode: string, args: string[] = [], env: NodeJS.ProcessEnv = { PATH: process.env.PATH }, wrapper: string[] = []) {
      const appPort = await closedPort();
      const argv = ["--upstream", `http://127.0.0.1:${appPort}`, ...args, "--", process.execPath, APP, String(appPort), mode];
      const daemon = await spawnDaemon(t, artifact.command, argv, { env, wrapper });
      return { daemon, appPort, appReady: () => daemon.waitForLog("app listening") };
    }
    const indexOf = (daemon: SpawnedDaemon, predicate: (record: Record<string, unknown>) => boolean) => daemon.records.findIndex(predicate);

    t.test("SIGTERM: the drain runs first, the stream in flight completes, then the app gets SIGTERM; exit is the app's", async (t) => {
      // The delay long enough for two requests after `draining` on a loaded machine (300 ms ran out: the second was reset as the listener closed).
      const { daemon, appPort, appReady } = await startWithApp(t, "serve", ["--shutdown-delay", "2300ms"]);
      await appReady();
      t.match(await daemon.waitForLog("app started"), { pid: Number, command: [process.execPath, APP, String(appPort), "serve"] });
      t.match(daemon.records.find((record) => record.msg === "listening"), { shutdownBudget: "27.3s" }, "delay + timeout + app stop");
      let streamEndedAt = 0;
      const streamed = new Promise<string>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: daemon.port, path: "/stream", agent: false }, (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString();
            if (text === "data: 1\n\n") daemon.child.kill("SIGTERM");
          });
          res.on("end", () => {
            streamEndedAt = Date.now();
            resolve(res.complete ? text : "incomplete");
          });
        });
        req.on("error", reject);
        req.end();
      });
      await daemon.waitForLog("draining");
      t.equal((await send(daemon.port, "/readyz")).status, 503, "not ready while draining");
      t.equal((await send(daemon.port, "/during-drain")).text(), "app /during-drain", "the app still answers during the delay");
      // The stream ends when the app is told to end it, directly (the proxy's listener may be closed by now).
      t.equal((await send(appPort, "/release")).text(), "released");
      t.equal(await streamed, "data: 1\n\ndata: 2\n\n", "the stream in flight ran to its end");
      const appSignal = await daemon.waitForLog("app got signal");
      t.equal(appSignal.signal, "SIGTERM");
      t.ok(streamEndedAt <= Number(appSignal.at), "the stream completed before the app heard SIGTERM");
      t.equal(await daemon.exited, 0, "the app's exit code");
      const order = ["draining", "stopping app", "app got signal", "app exited", "stopped"].map((msg) => indexOf(daemon, (record) => record.msg === msg));
      t.same([...order].sort((a, b) => a - b), order, `events in order: ${order.join(" < ")}`);
      t.ok(order.every((index) => index >= 0));
    });

    for (const code of [0, 3, 7]) {
      t.test(`the app exits on its own with ${code}: the proxy drains and exits ${code}`, async (t) => {
        const { daemon } = await startWithApp(t, `exit-${code}`);
        t.equal(await daemon.exited, code);
        t.match(daemon.records.find((record) => record.msg === "app exited"), { code });
        t.ok(indexOf(daemon, (record) => record.msg === "draining") > indexOf(daemon, (record) => record.msg === "app exited"));
      });
    }

    t.test("an app that ignores SIGTERM is killed after --app-stop-timeout: exit 137", async (t) => {
      const { daemon, appReady } = await startWithApp(t, "ignore-term", ["--app-stop-timeout", "200ms"]);
      await appReady();
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 137);
      t.match(daemon.records.find((record) => record.msg === "app exited"), { signal: "SIGKILL" });
      t.ok(daemon.records.some((record) => record.msg === "app did not exit in time; killing it"));
    });

    t.test("a second SIGTERM kills the app at once: exit 137", async (t) => {
      const { daemon, appReady } = await startWithApp(t, "ignore-term", ["--app-stop-timeout", "10m", "--shutdown-delay", "10m"]);
      await appReady();
      daemon.child.kill("SIGTERM");
      await daemon.waitForLog("draining");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 137);
    });

    t.test("SIGINT reaches the app as SIGINT, after the drain", async (t) => {
      const { daemon, appReady } = await startWithApp(t, "serve");
      await appReady();
      daemon.child.kill("SIGINT");
      t.equal((await daemon.waitForLog("app got signal")).signal, "SIGINT");
      t.equal(await daemon.exited, 0);
    });

    t.test("SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH are forwarded and the proxy keeps serving", async (t) => {
      const { daemon, appReady } = await startWithApp(t, "serve");
      await appReady();
      for (const signal of ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"] as const) {
        const before = daemon.records.filter((record) => record.msg === "app got signal").length;
        daemon.child.kill(signal);
        // Each arrives before the next is sent: wait for the app's record of it.
        while (daemon.records.filter((record) => record.msg === "app got signal").length === before) await new Promise((resolve) => daemon.child.stdout!.once("data", resolve));
        t.equal(daemon.records.filter((record) => record.msg === "app got signal").at(-1)?.signal, signal);
      }
      t.equal((await send(daemon.port, "/health")).status, 200);
      t.equal((await send(daemon.port, "/x")).text(), "app /x");
      t.equal(await inspectorPortAccepts(), false, "SIGUSR1 went to the app, not to an inspector of ours");
      // The binary's inspector port is 0 (sea-config.json): one opened would be on another port, and say so.
      t.notMatch(daemon.stderr(), /Debugger listening/);
      t.notOk(daemon.records.some((record) => record.msg === "draining"), "none of them stops the proxy");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
    });

    t.test("the app's environment is unchanged, NODE_OPTIONS included", async (t) => {
      // Set through `env`: tap adds its own loader to the NODE_OPTIONS of every child it sees spawned.
      const { daemon, appReady } = await startWithApp(t, "serve", [], { PATH: process.env.PATH }, ["env", "NODE_OPTIONS=--max-old-space-size=200", "APP_SETTING=kept"]);
      const ready = await appReady();
      t.equal(ready.nodeOptions, "--max-old-space-size=200");
      t.equal(ready.appSetting, "kept");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
    });

    t.test("a command that cannot start: 127 not found, 126 not executable, one line", async (t) => {
      const missing = await runToExit([...artifact.command, "--listen", "127.0.0.1:0", "--", "no-such-command-rp"]);
      t.equal(missing.code, 127);
      t.equal(missing.stderr, "error: cannot start no-such-command-rp: not found\n");
      const file = join(mkdtempSync(join(tmpdir(), "rp-app-")), "not-executable");
      writeFileSync(file, "#!/bin/sh\nexit 0\n");
      chmodSync(file, 0o644);
      const refused = await runToExit([...artifact.command, "--listen", "127.0.0.1:0", "--", file]);
      t.equal(refused.code, 126);
      t.equal(refused.stderr, `error: cannot start ${file}: permission denied (not executable)\n`);
    });

    t.test("a listen error exits 1 and the app is never started", async (t) => {
      const dir = mkdtempSync(join(tmpdir(), "rp-app-"));
      const marker = join(dir, "started");
      const busy = await spawnDaemon(t, artifact.command, []);
      const result = await runToExit([...artifact.command, "--listen", `127.0.0.1:${busy.port}`, "--", "/bin/sh", "-c", `touch ${marker}`]);
      t.equal(result.code, 1);
      t.match(result.stderr, /^error: cannot listen on 127\.0\.0\.1:\d+: address already in use\n$/);
      t.equal((await runToExit(["/bin/sh", "-c", `test -e ${marker}`])).code, 1, "the app never ran");
    });

    t.test("-- with nothing after it is a usage error", async (t) => {
      const result = await runToExit([...artifact.command, "--"]);
      t.equal(result.code, 2);
      t.equal(result.stderr, "error: --: expected the app's command after it, like -- python3 -m http.server 8000\n");
    });
  });
}
