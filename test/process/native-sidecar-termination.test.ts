// The native sidecar form's termination, run as the kubelet would for the shipped manifest (CONTRACT §14): both preStop hooks at once under steady load, the app's SIGTERM when its hook returns, the proxy's when the app has exited.
import { spawn, type ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { join } from "node:path";
import t, { type Test } from "tap";
import { deployObjects, podsOf, type KubeObject } from "../docs/manifests.js";
import { send } from "../helpers/http-client.js";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { BINARY, BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";

const APP = join(import.meta.dirname, "../helpers/lifecycle-app.mjs");
const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";

/** The shipped manifest's pod: the sidecar's args and env, both hooks. */
const pod = podsOf(deployObjects()).find((candidate) => candidate.source.startsWith("docs/deploy/deployment-sidecar.yaml"))!.spec;
const sidecar: KubeObject = pod.initContainers.find((container: KubeObject) => container.restartPolicy === "Always");
const appContainer: KubeObject = pod.containers[0];

/**
 * The sidecar's args as this machine can run them: its own listen and upstream ports, no mesh or
 * second app port to require, a 1 s delay instead of the manifest's 6 s (the order is what is
 * tested; the manifest's values are checked by test/docs/manifest-rules.test.ts), HTTP/1.1 to the
 * stand-in app. The rest as shipped.
 */
function sidecarArgs(upstreamPort: number): string[] {
  const dropped = ["--listen", "--upstream", "--readiness-required-listener", "--metrics-listen", "--shutdown-delay"];
  const kept = (sidecar.args as string[]).filter((arg) => !dropped.some((flag) => arg.startsWith(flag)));
  // The stand-in app speaks HTTP/1.1 only: HTTP/2 clients are relayed to it as HTTP/1.1.
  return [...kept, "--listen", "127.0.0.1:0", "--upstream", `http://127.0.0.1:${upstreamPort}`, "--shutdown-delay", "1s", "--upstream-protocol", "http1"];
}

/** The sidecar's env from the manifest, with the admin listener moved to a free port. */
function sidecarEnv(t: Test, adminPort: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  for (const variable of sidecar.env as KubeObject[]) env[variable.name] = String(variable.value);
  t.equal(env.READINESS_PROXY_ADMIN_LISTEN, "127.0.0.1:9901", "the manifest's admin listener");
  env.READINESS_PROXY_ADMIN_LISTEN = `127.0.0.1:${adminPort}`;
  return env;
}

interface AppProcess {
  readonly child: ChildProcess;
  readonly records: Array<Record<string, unknown>>;
  readonly exited: Promise<number | string>;
  waitFor(msg: string): Promise<Record<string, unknown>>;
}

/** The app container: its own process, as the kubelet runs it. */
async function startApp(t: Test, port: number): Promise<AppProcess> {
  const child = spawn(process.execPath, [APP, String(port)], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const records: Array<Record<string, unknown>> = [];
  const waiters: Array<{ msg: string; resolve: (record: Record<string, unknown>) => void }> = [];
  let pending = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const record = JSON.parse(pending.slice(0, newline)) as Record<string, unknown>;
      pending = pending.slice(newline + 1);
      records.push(record);
      for (const waiter of waiters.filter((entry) => entry.msg === record.msg)) waiter.resolve(record);
    }
  });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const waitFor = (msg: string) => new Promise<Record<string, unknown>>((resolve) => (records.find((record) => record.msg === msg) ? resolve(records.find((record) => record.msg === msg)!) : waiters.push({ msg, resolve })));
  await waitFor("app listening");
  return { child, records, exited, waitFor };
}

/** One GET through the proxy on a keep-alive agent: its status (0 for a failure) and when it ended. */
function get(agent: Agent, port: number, path: string): Promise<{ status: number; error?: string; endedAt: number }> {
  return new Promise((resolve) => {
    const outgoing = request({ host: "127.0.0.1", port, path, agent }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0, endedAt: Date.now() }));
      response.on("error", (error) => resolve({ status: 0, error: error.message, endedAt: Date.now() }));
    });
    outgoing.on("error", (error) => resolve({ status: 0, error: error.message, endedAt: Date.now() }));
    outgoing.end();
  });
}

t.test("the shipped manifest's hooks, run as the kubelet runs them under load: zero failed requests, the app stopped only after the drain", { skip }, async (t) => {
  t.same(sidecar.lifecycle.preStop.exec.command, ["/readiness-proxy", "drain"]);
  t.same(appContainer.lifecycle.preStop.httpGet, { path: "/wait-for-drain", port: 8080 });
  const appPort = await closedPort();
  const app = await startApp(t, appPort);
  const adminPort = await closedPort();
  const env = sidecarEnv(t, adminPort);
  const proxy = await spawnDaemon(t, binary.command, sidecarArgs(appPort), { env });

  // Steady bounded load: 4 HTTP/1.1 clients, each request 10-60 ms at the app, until the endpoints drop the
  // pod: new requests stop 500 ms (propagation, within the 1 s delay) after /readyz said 503 to the prober below.
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  let endpointsRemoved = false;
  const results: Array<{ status: number; error?: string; endedAt: number }> = [];
  const deadline = Date.now() + 30_000;
  const client = async (index: number) => {
    for (let n = 0; !endpointsRemoved && n < 1_000 && Date.now() < deadline; n++) results.push(await get(agent, proxy.port, `/work?ms=${10 + ((index * 17 + n * 13) % 50)}`));
  };
  // And one HTTP/2 client (gRPC-like: one long-lived connection), which hears GOAWAY only after the delay.
  const session = h2Connect(t, proxy.port);
  let h2Requests = 0;
  const h2Client = async () => {
    for (let n = 0; !endpointsRemoved && n < 1_000 && Date.now() < deadline; n++) {
      const answer = await h2Request(session, { ":path": `/work?ms=${10 + ((n * 13) % 50)}` });
      h2Requests++;
      results.push({ status: answer.status, ...(answer.rstCode === 0 ? {} : { error: `RST_STREAM ${answer.rstCode}` }), endedAt: Date.now() });
    }
  };
  const clients = [...[0, 1, 2, 3].map(client), h2Client()];
  while (results.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));
  // A long request in flight when the drain begins, outlasting the delay: the app must answer it before its SIGTERM.
  const long = get(agent, proxy.port, "/work?ms=1800");
  const prober = (async () => {
    while (!endpointsRemoved) {
      if ((await send(proxy.port, "/readyz")).status === 503) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        endpointsRemoved = true;
      } else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();

  // Termination begins: both preStop hooks at once.
  const terminationAt = Date.now();
  const drainHook = new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const command = spawn(BINARY, (sidecar.lifecycle.preStop.exec.command as string[]).slice(1), { env, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    command.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    command.on("close", (code) => resolve({ code, stdout }));
  });
  const appHook = send(proxy.port, appContainer.lifecycle.preStop.httpGet.path);
  const appSignalled = deferred<number>();
  void appHook.then(() => {
    // The app's hook returned: the kubelet sends the app SIGTERM.
    appSignalled.resolve(Date.now());
    app.child.kill("SIGTERM");
  });
  const proxySignalled = deferred<number>();
  void app.exited.then(() => {
    // The app has exited: now the sidecar's SIGTERM.
    proxySignalled.resolve(Date.now());
    proxy.child.kill("SIGTERM");
  });

  const drained = await drainHook;
  t.same([drained.code, JSON.parse(drained.stdout)], [0, { draining: true }], "the sidecar's hook: readiness-proxy drain");
  const hookAnswer = await appHook;
  t.same([hookAnswer.status, hookAnswer.json()], [200, { drained: true }], "the app's hook: /wait-for-drain");
  const longResult = await long;
  await Promise.all([...clients, prober]);
  const appGotSignal = await app.waitFor("app got signal");
  t.equal(await app.exited, 0, "the app stopped by itself on SIGTERM");
  const proxyCode = await proxy.exited;
  const proxyExitedAt = Date.now();

  const failed = results.filter((result) => result.status !== 200);
  t.same(failed, [], `zero failed requests of ${results.length}`);
  t.ok(results.length >= 40, `load ran: ${results.length} requests`);
  t.ok(h2Requests > 0, `${h2Requests} of them over HTTP/2`);
  t.ok(results.filter((result) => result.endedAt > terminationAt).length > 0, "requests kept coming during the drain's delay");
  t.equal(longResult.status, 200, "the request in flight at the drain's start was answered");
  t.equal(appGotSignal.signal, "SIGTERM");
  t.equal(appGotSignal.count, 1, "one signal");
  t.ok(Number(appGotSignal.at) >= terminationAt + 1_000, `the app heard SIGTERM only after the 1 s delay (${Number(appGotSignal.at) - terminationAt} ms)`);
  t.ok(longResult.endedAt <= Number(appGotSignal.at), "and after the request in flight finished");
  t.equal(appGotSignal.inFlight, 0, "nothing in flight at the app when it heard its signal");
  t.equal(proxyCode, 0, "the proxy exits 0");
  t.ok(proxyExitedAt - (await proxySignalled.promise) < 2_000, `promptly after its SIGTERM (${proxyExitedAt - (await proxySignalled.promise)} ms): its delay had passed`);
  t.ok((await appSignalled.promise) <= Number(appGotSignal.at));
  t.equal(proxy.records.filter((record) => record.msg === "draining").length, 1, "one drain, begun by the hook");
  t.match(proxy.records.find((record) => record.msg === "draining"), { reason: "POST /drain" });
});

t.test("the app container restarted alone: its preStop returns within 5 s, without a drain", { skip }, async (t) => {
  const appPort = await closedPort();
  const adminPort = await closedPort();
  const proxy = await spawnDaemon(t, binary.command, sidecarArgs(appPort), { env: sidecarEnv(t, adminPort) });
  const started = Date.now();
  const answer = await send(proxy.port, appContainer.lifecycle.preStop.httpGet.path);
  const tookMs = Date.now() - started;
  t.same([answer.status, answer.json()], [200, { drained: false }]);
  // The 5 s itself is the unit test's (test/http/wait-for-drain.test.ts, injected timers); here: real, and not held beyond it.
  t.ok(tookMs < 6_000, `returned after ${tookMs} ms`);
  t.equal((await send(proxy.port, "/readyz")).status, 200, "nothing drained: still ready");
  t.notOk(proxy.records.some((record) => record.msg === "draining"), "it started nothing");
  proxy.child.kill("SIGTERM");
  t.equal(await proxy.exited, 0);
});
