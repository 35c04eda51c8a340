// The shipped program's log on each kind of stdout (CONTRACT §11): a FIFO gets the pipe sink for every line (a non-blocking descriptor of the proxy's own; fd 1 and the app's stdout stay blocking), a stopped reader costs lines and not memory or /health, a file keeps sonic-boom for access lines; a socket no app shares (the sidecar form) gets the pipe sink on fd 1 itself.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import t, { type Test } from "tap";
import { descriptorsLike, fdFlags, lineReader, makeFifo, O_NONBLOCK } from "../helpers/fifo.js";
import { send } from "../helpers/http-client.js";
import type { LogRecord } from "../helpers/log-capture.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;
const FLAGS_APP = join(import.meta.dirname, "../helpers/stdout-flags-app.mjs");

/**
 * Starts `command` with stdout on `stdoutFd`, killed at the test's end if still running. Through
 * `env -u NODE_OPTIONS` (which execs it: the same pid): tap puts its own `--import` into every
 * child's NODE_OPTIONS, and that loader's worker thread touches process.stdout, which makes a
 * pipe's shared description non-blocking, the very thing these tests look for. In the
 * entrypoint form the app inherits the proxy's environment, so it is spared too.
 */
function start(t: Test, command: readonly string[], args: readonly string[], stdoutFd: number): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn("env", ["-u", "NODE_OPTIONS", ...command, ...args], { env: { PATH: process.env.PATH }, stdio: ["ignore", stdoutFd, "inherit"] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
}

/** GETs each path on `agent`'s connections (one keep-alive connection: in order), bodies read. */
async function getAll(port: number, paths: readonly string[], agent: Agent): Promise<void> {
  await Promise.all(
    paths.map(
      (path) =>
        new Promise<void>((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
            res.resume();
            res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${path}: ${res.statusCode}`))));
          });
          req.on("error", reject);
          req.end();
        }),
    ),
  );
}

const parse = (lines: readonly string[]) => lines.map((line) => JSON.parse(line) as LogRecord);
const listenPort = (line: string) => Number(/:(\d+)$/.exec(String((JSON.parse(line) as LogRecord).listen))![1]);
const isMsg = (msg: string) => (line: string) => line.includes(`"msg":"${msg}"`);

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}, stdout a FIFO: access lines through a non-blocking descriptor of its own, whole, in order, all out by the exit; fd 1 stays blocking`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    const upstream = await startUpstream(t);
    const fifo = makeFifo(t);
    const { child, exited } = start(t, artifact.command, ["--listen", "127.0.0.1:0", "--upstream", upstream.url, "--access-log", "--shutdown-delay", "0s"], fifo.writeFd);
    fifo.closeWriteEnd();
    const reader = lineReader(fifo.read(fifo.readFd));
    const port = listenPort(await reader.untilLine(isMsg("listening")));
    const atStart = descriptorsLike(child.pid!, 1).filter((fd) => fd !== 1);
    t.equal(atStart.length, 1, "its own descriptor is opened at start: the lifecycle lines go through it too");
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const paths = Array.from({ length: 500 }, (_, index) => `/seq/${index}?token=x`);
    await getAll(port, paths, agent);
    await reader.untilLine((line) => line.includes('"path":"/seq/499"'));
    const own = descriptorsLike(child.pid!, 1).filter((fd) => fd !== 1);
    t.same(own, atStart, "the same one descriptor on stdout's pipe, for the access lines too");
    t.equal(fdFlags(child.pid!, own[0]!) & O_NONBLOCK, O_NONBLOCK, "its own, non-blocking");
    t.equal(fdFlags(child.pid!, 1) & O_NONBLOCK, 0, "fd 1, shared with anyone who inherited it, still blocking");
    await getAll(port, ["/last"], agent);
    child.kill("SIGTERM");
    t.equal(await exited, 0);
    await reader.ended;
    t.equal(reader.rest(), "", "no torn line");
    const records = parse(reader.lines);
    t.same(
      records.filter((record) => record.msg === "request").map((record) => record.path),
      [...paths.map((path) => path.slice(0, path.indexOf("?"))), "/last"],
      "every access line, in the order the requests finished, the last one written before the exit",
    );
    t.ok(records.some((record) => record.msg === "stopped"));
  });
}

t.test("a FIFO reader that stops: /health still answers, lines past the bound are dropped and counted (memory stays bounded), reported once it reads again, and lines resume", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const upstream = await startUpstream(t);
  const fifo = makeFifo(t);
  const { child, exited } = start(t, bundle.command, ["--listen", "127.0.0.1:0", "--upstream", upstream.url, "--access-log", "--shutdown-delay", "0s"], fifo.writeFd);
  fifo.closeWriteEnd();
  const first = fifo.read(fifo.readFd);
  const port = listenPort(await lineReader(first).untilLine(isMsg("listening")));
  // From here the pipe has one reader that takes nothing: a log collector that stopped.
  const stuck = fifo.openReadEnd();
  first.destroy();
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.teardown(() => agent.destroy());
  const sent = 8_000; // about 2 MB of lines: twice what the pipe and the 1 MiB bound hold
  await getAll(port, Array.from({ length: sent }, (_, index) => `/stuck/${index}`), agent);
  t.equal((await send(port, "/health")).status, 200, "/health answers while stdout takes nothing");
  t.equal(child.exitCode, null, "the process is up");
  const reader = lineReader(fifo.read(stuck));
  const dropped = JSON.parse(await reader.untilLine(isMsg("access log lines dropped"))) as LogRecord;
  t.match(dropped, { level: 40, dropped: Number });
  // A request after the resume: its line comes after every line of the stop, kept or dropped.
  await getAll(port, ["/after"], agent);
  await reader.untilLine((line) => line.includes('"path":"/after"'));
  child.kill("SIGTERM");
  t.equal(await exited, 0);
  await reader.ended;
  const records = parse(reader.lines);
  const kept = records.filter((record) => record.msg === "request" && String(record.path).startsWith("/stuck/")).length;
  const reported = records.filter((record) => record.msg === "access log lines dropped").reduce((sum, record) => sum + Number(record.dropped), 0);
  t.equal(kept + reported, sent, `${kept} written and ${reported} dropped: every line accounted for`);
  t.ok(reported > 0 && kept < sent, "some were dropped");
  // What was held for the stopped reader: the pipe's 64 KiB and the 1 MiB bound, and a last batch handed over after it read again.
  const bytesKept = reader.lines.filter((line) => line.includes('"path":"/stuck/')).reduce((sum, line) => sum + line.length + 1, 0);
  t.ok(bytesKept < 1024 * 1024 + 64 * 1024 + 192 * 1024, `${bytesKept} bytes of lines held`);
});

t.test("stdout a file: the fallback (sonic-boom) writes every line whole and in order, and opens nothing more", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const upstream = await startUpstream(t);
  const path = join(t.testdir(), "stdout.log");
  const file = openSync(path, "w");
  const { child, exited } = start(t, bundle.command, ["--listen", "127.0.0.1:0", "--upstream", upstream.url, "--access-log", "--shutdown-delay", "0s"], file);
  closeSync(file);
  // A file has no reader to wait for: the first line is there once the listener is.
  let port = 0;
  for (const deadline = performance.now() + 10_000; port === 0 && performance.now() < deadline; ) {
    const line = readFileSync(path, "utf8").split("\n").find(isMsg("listening"));
    if (line) port = listenPort(line);
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.not(port, 0, "listening within 10 s");
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const paths = Array.from({ length: 300 }, (_, index) => `/file/${index}`);
  await getAll(port, paths, agent);
  t.same(descriptorsLike(child.pid!, 1), [1], "no second descriptor: sonic-boom writes fd 1");
  child.kill("SIGTERM");
  t.equal(await exited, 0);
  const text = readFileSync(path, "utf8");
  t.ok(text.endsWith("\n"));
  const records = parse(text.split("\n").filter((line) => line !== ""));
  t.same(records.filter((record) => record.msg === "request").map((record) => record.path), paths);
});

t.test("stdout a socket (a Node parent's pipe): the pipe sink on fd 1 itself, nothing more opened", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await spawnDaemon(t, bundle.command, ["--upstream", upstream.url, "--access-log"]);
  t.equal((await send(daemon.port, "/x")).status, 200);
  await daemon.waitForLog("request");
  t.same(descriptorsLike(daemon.child.pid!, 1), [1]);
});

t.test("entrypoint form, stdout a FIFO: the app's stdout (the shared fd 1) stays blocking after the proxy opened its own, and its lines and ours stay whole", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const appPort = await closedPort();
  const fifo = makeFifo(t);
  const args = ["--listen", "127.0.0.1:0", "--upstream", `http://127.0.0.1:${appPort}`, "--access-log", "--shutdown-delay", "0s", "--", process.execPath, FLAGS_APP, String(appPort)];
  const { child, exited } = start(t, bundle.command, args, fifo.writeFd);
  fifo.closeWriteEnd();
  const reader = lineReader(fifo.read(fifo.readFd));
  const port = listenPort(await reader.untilLine(isMsg("listening")));
  await reader.untilLine(isMsg("app listening"));
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  await getAll(port, Array.from({ length: 200 }, (_, index) => `/warm/${index}`), agent);
  await reader.untilLine((line) => line.includes('"path":"/warm/') && line.includes('"msg":"request"'));
  t.equal(descriptorsLike(child.pid!, 1).length, 2, "the proxy writes its access lines through its own descriptor now");
  const flags = Number((await send(port, "/flags")).text());
  t.equal(flags & O_NONBLOCK, 0, "the app's stdout is still blocking: its writes wait instead of failing with EAGAIN");
  child.kill("SIGTERM");
  t.equal(await exited, 0);
  await reader.ended;
  t.equal(reader.rest(), "");
  const records = parse(reader.lines);
  t.equal(records.filter((record) => record.msg === "app request").length, 201, "every app line whole");
  t.equal(records.filter((record) => record.msg === "request").length, 201, "every access line whole");
});
