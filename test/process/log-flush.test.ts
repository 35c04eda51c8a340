// The last log lines before an exit reach stdout whole and in order (CONTRACT §11: asynchronous writes, all flushed before exit), through a socket (sonic-boom) and a FIFO (the pipe sink), and a stdout nobody reads never holds the exit up.
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { join } from "node:path";
import { buildSync } from "esbuild";
import t, { type Test } from "tap";
import { makeFifo } from "../helpers/fifo.js";
import type { LogRecord } from "../helpers/log-capture.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";

const LINES = 20_000;
/** Far above the burst (about 6 MB): these tests are about order and the flush at exit; the bound has its own. */
const UNBOUNDED = String(64 * 1024 * 1024);
/** How the child's stdout reaches this process: a Node pipe (libuv makes it a socketpair: sonic-boom) or a FIFO (the pipe sink). */
type Stdout = "socket" | "fifo";
const STDOUTS: readonly Stdout[] = ["socket", "fifo"];

/** The child script bundled as the release is (esbuild, CommonJS, dependencies inside): no TypeScript loader in the child. */
function bundleChild(t: Test): string {
  const outfile = join(t.testdir(), "log-exit-child.cjs");
  buildSync({ entryPoints: [join(import.meta.dirname, "../helpers/log-exit-child.ts")], bundle: true, platform: "node", format: "cjs", target: "node20", outfile, logLevel: "warning" });
  return outfile;
}

interface ChildRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly elapsedMs: number;
}

/**
 * Runs the child; `reader` "slow" pauses after every chunk (stdout backs up, writes wait), "none"
 * reads nothing until it has exited. `killAfterMs`: a child still running then is killed (SIGKILL,
 * code null), so that a hang fails its test instead of holding the run until tap's timeout.
 */
function runChild(t: Test, script: string, mode: string, reader: "slow" | "none", kind: Stdout, maxQueuedBytes?: string, killAfterMs?: number): Promise<ChildRun> {
  const started = Date.now();
  const args = [script, mode, String(LINES), ...(maxQueuedBytes === undefined ? [] : [maxQueuedBytes])];
  let child: ChildProcess;
  let stream: Readable;
  if (kind === "fifo") {
    const fifo = makeFifo(t);
    child = spawn(process.execPath, args, { stdio: ["ignore", fifo.writeFd, "inherit"] });
    fifo.closeWriteEnd();
    stream = fifo.read(fifo.readFd);
  } else {
    child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    stream = child.stdout!;
  }
  let stdout = "";
  if (reader === "none") stream.pause();
  stream.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (reader === "slow") {
      stream.pause();
      setTimeout(() => stream.resume(), 1);
    }
  });
  let elapsedMs = 0;
  const killer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  child.on("exit", () => {
    clearTimeout(killer);
    elapsedMs = Date.now() - started;
    stream.resume(); // what a paused reader left in the pipe
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  // A FIFO's reader sees its end when the last writer closes it: the child, at its exit.
  const drained = new Promise((resolve) => stream.once("end", resolve));
  return Promise.all([exited, drained]).then(([code]) => ({ code, stdout, elapsedMs }));
}

/** Every newline-terminated line parsed; a line that is not JSON fails the test with its text. */
function records(t: Test, stdout: string): LogRecord[] {
  const lines = stdout.slice(0, stdout.lastIndexOf("\n") + 1).split("\n").filter((line) => line !== "");
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogRecord];
    } catch {
      t.fail(`a torn line: ${line.slice(0, 120)}`);
      return [];
    }
  });
}

function inOrder(lines: LogRecord[]): boolean {
  return lines.every((record, index) => record.requestId === String(index));
}

/** How long a child whose stdout nobody reads may take to exit: end()'s timeout (300 ms there) and a start, with room. */
const STUCK_EXIT_MS = 10_000;

for (const kind of STDOUTS) {
  t.test(`stdout a ${kind}: every line out, whole and in order, before the exit: after a stop, and after an uncaught exception`, async (t) => {
    const script = bundleChild(t);
    for (let run = 0; run < 3; run++) {
      const stopped = await runChild(t, script, "exit", "slow", kind, UNBOUNDED);
      t.equal(stopped.code, 0);
      const stopLines = records(t, stopped.stdout);
      t.equal(stopLines.length, LINES + 1, `run ${run}: ${LINES} access lines and stopped`);
      // `stopped` is a lifecycle line, written at once; access lines still buffered go out after it.
      t.equal(stopLines.filter((record) => record.msg === "stopped").length, 1, "stopped is out");
      t.ok(inOrder(stopLines.filter((record) => record.msg === "request")), "access lines in the order logged");
      const crashed = await runChild(t, script, "uncaught", "slow", kind, UNBOUNDED);
      t.equal(crashed.code, 1);
      const crashLines = records(t, crashed.stdout);
      t.equal(crashLines.length, LINES + 1, `run ${run}: ${LINES} access lines and the fatal one`);
      t.match(crashLines.find((record) => record.level === 60), { msg: "uncaught exception", err: { message: "boom" } });
      t.ok(inOrder(crashLines.filter((record) => record.msg === "request")));
    }
  });

  t.test(`stdout a ${kind} nobody reads: the exit comes after end()'s timeout, not never; what got out is whole lines, in order, no more than the bound`, async (t) => {
    const stuck = await runChild(t, bundleChild(t), "stuck", "none", kind, undefined, STUCK_EXIT_MS);
    // A socket (the sidecar form: nobody shares it) gets the pipe sink, as a FIFO does (issue 52.7:
    // sonic-boom's write(2) blocked a thread-pool thread forever, and process.exit() waited for it).
    t.equal(stuck.code, 0, "exit 0, not killed");
    t.ok(stuck.elapsedMs < STUCK_EXIT_MS, `exited after ${stuck.elapsedMs} ms`);
    const lines = records(t, stuck.stdout);
    t.ok(lines.length < LINES, `${lines.length} lines got out before the reader stopped`);
    t.ok(inOrder(lines.filter((record) => record.msg === "request")), "those in order");
    // The pipe's or socket's buffer, then at most 1 MiB waiting in the process: the rest of the 6 MB burst was dropped.
    t.ok(Buffer.byteLength(stuck.stdout) < 2 * 1024 * 1024, `${Buffer.byteLength(stuck.stdout)} bytes`);
  });
}

const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;

t.test("the daemon: stopped is its last line on SIGTERM; a usage error writes nothing to stdout", { skip: !bundle.built && "dist/readiness-proxy.cjs is not built (make build)" }, async (t) => {
  const daemon = await spawnDaemon(t, bundle.command, ["--upstream", "http://127.0.0.1:9", "--access-log", "--max-concurrency", "4"]);
  t.match(daemon.records[0], { msg: "listening", maxConcurrency: 4, maxQueue: 40, queueTimeout: "10s", accessLog: true });
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  t.equal(daemon.records.at(-1)?.msg, "stopped");
  const refused = await runToExit([...bundle.command, "--max-concurrency", "0x10"]);
  t.equal(refused.code, 2);
  t.equal(refused.stderr, 'error: --max-concurrency: expected an integer 1..65535, got "0x10"\n');
  t.equal(refused.stdout, "");
});
