// Issue 37's remote crashes, on the wire against the built binary: a reset gRPC health stream, and `http2-settings` in trailers or a 103 from either side, each end one stream at most, never the process.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import t, { type Test } from "tap";
import { h2Connect, h2Request } from "../../helpers/h2.js";
import { BINARY, spawnDaemon, type SpawnedDaemon } from "../../helpers/spawn-daemon.js";

const PYTHON = "/usr/bin/python3";
const PEER = join(import.meta.dirname, "../../helpers/h2-defects.py");
const hasHpack = await new Promise<boolean>((resolve) => execFile(PYTHON, ["-c", "import hpack"], (error) => resolve(!error)));
const skip = !existsSync(BINARY) ? "the binary is not built (make build)" : !hasHpack ? "python3-hpack is not installed (apt-get install python3-h2)" : false;

interface Outcome {
  pingAcked: boolean;
  goaway: number | null;
  rst: Record<string, number>;
  status: Record<string, number>;
  closed: boolean;
}

function client(port: number, scenario: string): Promise<Outcome> {
  return new Promise((resolve, reject) =>
    execFile(PYTHON, [PEER, "client", String(port), scenario], { timeout: 20_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${scenario}: ${stderr}`)) : resolve(JSON.parse(stdout) as Outcome))),
  );
}

interface RawApp {
  readonly url: string;
  /** The trailer lists the app received, in order. */
  readonly trailers: Array<Array<[string, string]>>;
  nextTrailers(): Promise<Array<[string, string]>>;
}

/** The raw h2c app of h2-defects.py, which sends what node:http2 would refuse to. */
async function startRawApp(t: Test, mode: string): Promise<RawApp> {
  const child = spawn(PYTHON, [PEER, "app", mode], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => void child.kill("SIGKILL"));
  const lines = createInterface({ input: child.stdout! });
  const trailers: Array<Array<[string, string]>> = [];
  const waiting: Array<(list: Array<[string, string]>) => void> = [];
  const port = await new Promise<number>((resolve) => {
    lines.on("line", (line) => {
      if (line.startsWith("listening ")) resolve(Number(line.slice(10)));
      else if (line.startsWith("trailers ")) {
        const list = JSON.parse(line.slice(9)) as Array<[string, string]>;
        trailers.push(list);
        waiting.shift()?.(list);
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    trailers,
    nextTrailers: () => new Promise((resolve) => (trailers.length > waiting.length ? resolve(trailers[waiting.length]!) : waiting.push(resolve))),
  };
}

/** The process answers a new connection and has logged no uncaught exception. */
async function stillServing(t: Test, daemon: SpawnedDaemon, what: string): Promise<void> {
  const health = await h2Request(h2Connect(t, daemon.port), { ":path": "/healthz" });
  t.equal(health.status, 200, `${what}: /healthz still answers`);
  t.equal(daemon.child.exitCode, null, `${what}: the process is running`);
  t.notOk(daemon.records.some((record) => record.msg === "uncaught exception"), `${what}: no uncaught exception`);
}

t.test("a claimed gRPC health stream cut short by the client ends that stream only", { skip }, async (t) => {
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", "http://127.0.0.1:9"]);
  for (const code of [1, 2, 8]) {
    await client(daemon.port, `health-reset-at-once:${code}`);
    await stillServing(t, daemon, `RST_STREAM(${code}) before any DATA`);
    const outcome = await client(daemon.port, `health-reset:${code}`);
    t.ok(outcome.pingAcked, `RST_STREAM(${code}): the connection serves on`);
    await stillServing(t, daemon, `RST_STREAM(${code})`);
  }
  await client(daemon.port, "health-goaway");
  await stillServing(t, daemon, "GOAWAY(INTERNAL_ERROR)");
  await client(daemon.port, "health-tcp-reset");
  await stillServing(t, daemon, "a TCP reset with unread data");
});

t.test("http2-settings in a client's request trailers never reaches an h2c app, and never ends the process", { skip }, async (t) => {
  const app = await startRawApp(t, "plain");
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url]);
  const outcome = await client(daemon.port, "request-trailers");
  await stillServing(t, daemon, "request trailers");
  t.equal(outcome.status["1"], 200, "the request is answered");
  const received = await Promise.race([app.nextTrailers(), daemon.exited.then((code) => `exited ${code}`)]);
  t.same(received, [["x-checksum", "abc"]], "the app gets the trailers without http2-settings");
});

for (const mode of ["trailers-settings", "interim-settings"]) {
  t.test(`an h2c app's ${mode === "trailers-settings" ? "trailers" : "103 head"} with http2-settings: relayed without it`, { skip }, async (t) => {
    const app = await startRawApp(t, mode);
    const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url]);
    const answer = await h2Request(h2Connect(t, daemon.port), { ":path": "/x" });
    t.equal(answer.status, 200);
    t.equal(answer.body.toString(), "ok", "the body is relayed");
    t.equal(answer.trailers?.["x-app"], "done", "the app's trailers are relayed");
    t.equal(answer.trailers?.["http2-settings"], undefined, "without http2-settings");
    await stillServing(t, daemon, mode);
  });
}
