// Issues 37.3 and 52.7 against the binary: stdout a pipe whose reader stopped (full), or a socket nobody reads (in both forms), costs log lines, never the event loop: /healthz and a 502 are answered, a SIGTERM or the app's exit ends the process within its timeouts with its code, and lines flow again once it reads.
import { spawn, spawnSync } from "node:child_process";
import type { Socket } from "node:net";
import { closeSync, existsSync, readdirSync, readFileSync, writeSync } from "node:fs";
import t, { type Test } from "tap";
import { reopenPipeNonBlocking } from "../../src/access-log/stdout-sink.js";
import { fdFlags, lineReader, makeFifo, O_NONBLOCK } from "../helpers/fifo.js";
import { send } from "../helpers/http-client.js";
import { BINARY } from "../helpers/spawn-daemon.js";
import { closedPort, within } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const skip = existsSync(BINARY) ? false : "the binary is not built (make build)";
const isMsg = (msg: string) => (line: string) => line.includes(`"msg":"${msg}"`);

/** Writes into the pipe until the kernel takes no more: what a log collector that stopped reading leaves. */
function fillPipe(writeFd: number): void {
  const own = reopenPipeNonBlocking(writeFd, "/proc/self/fd");
  if (own === undefined) throw new Error("could not reopen the FIFO");
  const line = Buffer.from(`${"x".repeat(1023)}\n`);
  try {
    for (;;) writeSync(own, line);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
  } finally {
    closeSync(own);
  }
}

async function startWithFifo(t: Test) {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => {
    if (req.url === "/fail") return req.socket.destroy(); // a 502 of ours, and its warn line
    res.end("ok");
  });
  const fifo = makeFifo(t);
  const child = spawn("env", ["-u", "NODE_OPTIONS", BINARY, "--listen", "127.0.0.1:0", "--upstream", upstream.url, "--access-log", "--shutdown-delay", "0s", "--shutdown-timeout", "2s"], {
    env: { PATH: process.env.PATH },
    stdio: ["ignore", fifo.writeFd, "inherit"],
  });
  t.teardown(() => void child.kill("SIGKILL"));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const first = fifo.read(fifo.readFd);
  const listening = await lineReader(first).untilLine(isMsg("listening"));
  const port = Number(/:(\d+)"/.exec(listening)![1]);
  // From here the pipe has one reader that takes nothing, and the pipe is full.
  const stuck = fifo.openReadEnd();
  first.destroy();
  fillPipe(fifo.writeFd);
  fifo.closeWriteEnd();
  return { fifo, child, exited, port, stuck };
}

t.test("a full stdout: /healthz and a 502 are answered, and SIGTERM ends the process within its timeouts", { skip }, async (t) => {
  const { child, exited, port } = await startWithFifo(t);
  const health = await within(send(port, "/healthz"), 10_000, "no answer");
  t.equal(typeof health === "string" ? health : health.status, 200, "/healthz answers");
  const failed = await within(send(port, "/fail"), 10_000, "no answer");
  t.equal(typeof failed === "string" ? failed : failed.status, 502, "a 502 (with its warn line) is answered");
  const ok = await within(send(port, "/ok"), 10_000, "no answer");
  t.equal(typeof ok === "string" ? ok : ok.status, 200, "and the next request after it");
  child.kill("SIGTERM");
  // 2 s of shutdown timeout and 1 s for the log's end at most; the bound here only keeps a hang from stalling the suite.
  t.equal(await within(exited, 20_000, "still running"), 0, "SIGTERM obeyed: exit 0 while stdout takes nothing");
});

t.test("a full stdout that reads again: the lines held come out whole, lifecycle lines first", { skip }, async (t) => {
  const { fifo, child, exited, port, stuck } = await startWithFifo(t);
  t.equal((await send(port, "/fail")).status, 502);
  t.equal((await send(port, "/ok")).status, 200);
  const reader = lineReader(fifo.read(stuck));
  const warned = await reader.untilLine(isMsg("upstream unavailable"));
  await reader.untilLine((line) => line.includes('"msg":"request"') && line.includes('"path":"/ok"'));
  const logged = reader.lines.filter((line) => line.startsWith("{"));
  t.ok(logged.indexOf(warned) < logged.findIndex((line) => line.includes('"path":"/fail"')), "the warn line before the access lines that waited with it");
  child.kill("SIGTERM");
  t.equal(await exited, 0);
  await reader.ended;
  t.equal(reader.rest(), "", "no torn line");
  t.ok(reader.lines.some(isMsg("stopped")), "every line out by the exit");
});

t.test("stdout a socket nobody reads (systemd's journal, stalled): /healthz is answered and SIGTERM ends the process within its timeouts, exit 0", { skip }, async (t) => {
  const upstream = await startUpstream(t);
  // A Node parent's "pipe" is a unix socketpair: the child's stdout is a socket, as the journal's is.
  const child = spawn("env", ["-u", "NODE_OPTIONS", BINARY, "--listen", "127.0.0.1:0", "--upstream", upstream.url, "--access-log", "--shutdown-delay", "0s", "--shutdown-timeout", "2s"], {
    env: { PATH: process.env.PATH },
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.teardown(() => void child.kill("SIGKILL"));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const listening = await lineReader(child.stdout as Socket).untilLine(isMsg("listening"));
  const port = Number(/:(\d+)"/.exec(listening)![1]);
  // From here nobody reads: the socket's buffer fills, then the 1 MiB the process may hold.
  child.stdout!.pause();
  // About 8 KiB an access line: 400 of them are 3 MiB, past the socket's buffer and the bound together.
  const userAgent = "x".repeat(8_000);
  for (let batch = 0; batch < 20; batch++) {
    const answers = await within(Promise.all(Array.from({ length: 20 }, () => send(port, "/ok", { headers: { "user-agent": userAgent } }))), 20_000, "no answer");
    t.notOk(typeof answers === "string", `batch ${batch}: answered while stdout takes nothing`);
    if (typeof answers === "string") return;
  }
  const health = await within(send(port, "/healthz"), 10_000, "no answer");
  t.equal(typeof health === "string" ? health : health.status, 200, "/healthz answers");
  child.kill("SIGTERM");
  // 2 s of shutdown timeout and 1 s for the log's end at most; the bound here only keeps a hang from stalling the suite.
  t.equal(await within(exited, 20_000, "still running"), 0, "SIGTERM obeyed: exit 0 while stdout takes nothing");
});

/**
 * The entrypoint form's app: never touches stdout (a Node app would make the shared description
 * non-blocking itself), answers 200, `GET /exit` ends it with 5 on its own, SIGTERM with 7.
 */
const QUIET_APP = [
  "import http.server, os, signal, sys",
  "class Quiet(http.server.BaseHTTPRequestHandler):",
  "    def do_GET(self):",
  "        if self.path == '/exit': os._exit(5)",
  "        self.send_response(200); self.send_header('content-length', '2'); self.end_headers(); self.wfile.write(b'ok')",
  "    def log_message(self, *args): pass",
  "class Server(http.server.ThreadingHTTPServer):",
  "    request_queue_size = 128",
  "signal.signal(signal.SIGTERM, lambda *args: sys.exit(7))",
  "Server(('127.0.0.1', int(sys.argv[1])), Quiet).serve_forever()",
].join("\n");

/** write(2)'s number on this machine, as /proc/<pid>/task/<tid>/syscall shows a thread blocked in it. */
const WRITE_SYSCALL = process.arch === "arm64" ? "64" : "1";

/** Whether a thread of `pid` is blocked in write(2) now: stdout took nothing more. */
function blockedInWrite(pid: number): boolean {
  return readdirSync(`/proc/${pid}/task`).some((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/syscall`, "utf8").split(" ")[0] === WRITE_SYSCALL;
    } catch {
      return false; // a thread gone since the listing
    }
  });
}

/** The binary in the entrypoint form in front of QUIET_APP, stdout a unix socketpair (what a Node parent gives, and the journal's kind), once the app answers. */
async function startEntrypoint(t: Test, extraArgs: readonly string[] = []) {
  const appPort = await closedPort();
  const args = ["--listen", "127.0.0.1:0", "--upstream", `http://127.0.0.1:${appPort}`, "--access-log", "--shutdown-delay", "0s", "--shutdown-timeout", "2s", "--app-stop-timeout", "2s", ...extraArgs];
  const child = spawn("env", ["-u", "NODE_OPTIONS", BINARY, ...args, "--", "python3", "-c", QUIET_APP, String(appPort)], { env: { PATH: process.env.PATH }, stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => void child.kill("SIGKILL"));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const reader = lineReader(child.stdout as Socket);
  const listening = await reader.untilLine(isMsg("listening"));
  const port = Number(/:(\d+)"/.exec(listening)![1]);
  const appStarted = await reader.untilLine(isMsg("app started"));
  // The app runs in a process group of its own: ended here if a failed test left it behind.
  const appPid = (JSON.parse(appStarted) as { pid: number }).pid;
  t.teardown(() => {
    try {
      process.kill(appPid, "SIGKILL");
    } catch {
      // Already gone with the proxy's stop.
    }
  });
  // Whatever order the two start in: the app is up (and its SIGTERM handler set) once it answers.
  const deadline = Date.now() + 30_000;
  while ((await send(port, "/ok")).status !== 200) {
    if (Date.now() > deadline) throw new Error("the app never answered");
    await reader.untilLine((line) => isMsg("request")(line) && line.includes('"status":502'));
  }
  return { child, exited, reader, port };
}

/** Stops reading the proxy's stdout and sends requests with 8 KiB access lines until a thread of the proxy is blocked in write(2) on it. */
async function stallStdout(t: Test, child: ReturnType<typeof spawn>, port: number): Promise<boolean> {
  child.stdout!.pause();
  const userAgent = "x".repeat(8_000);
  for (let batch = 0; batch < 100; batch++) {
    const answers = await within(Promise.all(Array.from({ length: 20 }, () => send(port, "/ok", { headers: { "user-agent": userAgent } }))), 20_000, "no answer");
    if (typeof answers === "string") {
      t.fail(`batch ${batch}: not answered while stdout takes nothing`);
      return false;
    }
    if (blockedInWrite(child.pid!)) return true;
  }
  t.fail("no thread of the proxy ever blocked in write(2): the test did not stall stdout");
  return false;
}

for (const { flags, code } of [
  { flags: [], code: 7 },
  { flags: ["--exit-zero-on-stop"], code: 0 },
]) {
  t.test(`the entrypoint form${flags.length ? " with --exit-zero-on-stop" : ""}, stdout a socket the app shares that nobody reads, a write blocked in it: SIGTERM ends the process within its timeouts, exit ${code}`, { skip }, async (t) => {
    const { child, exited, port } = await startEntrypoint(t, flags);
    if (!(await stallStdout(t, child, port))) return;
    const health = await within(send(port, "/healthz"), 10_000, "no answer");
    t.equal(typeof health === "string" ? health : health.status, 200, "/healthz answers with a write blocked in the kernel");
    const signalled = Date.now();
    child.kill("SIGTERM");
    void exited.then(() => t.comment(`exited ${Date.now() - signalled} ms after SIGTERM (loaded machine)`));
    // 2 s of shutdown timeout, 2 s for the app's stop and 1 s for the log's end at most; the bound here only keeps a hang from stalling the suite.
    t.equal(await within(exited, 20_000, "still running"), code, "SIGTERM obeyed with the code the contract gives, while stdout takes nothing");
  });
}

t.test("the entrypoint form, stdout a socket the app shares that nobody reads, a write blocked in it: the app's own exit ends the process with its code", { skip }, async (t) => {
  const { child, exited, port } = await startEntrypoint(t);
  if (!(await stallStdout(t, child, port))) return;
  const ended = Date.now();
  void send(port, "/exit").catch(() => {}); // the app ends mid-request: a 502 or a cut connection
  void exited.then(() => t.comment(`exited ${Date.now() - ended} ms after the app's end (loaded machine)`));
  t.equal(await within(exited, 20_000, "still running"), 5, "the app's own code, while stdout takes nothing");
});

t.test("the entrypoint form, stdout a socket the app shares, read: every line out, whole and in order, the description left blocking for the app", { skip }, async (t) => {
  const { child, exited, reader, port } = await startEntrypoint(t);
  t.equal(fdFlags(child.pid!, 1) & O_NONBLOCK, 0, "the shared description stays blocking");
  const statuses: number[] = [];
  for (let index = 0; index < 300; index++) statuses.push((await send(port, `/line/${index}`)).status);
  t.ok(statuses.every((status) => status === 200), "every request answered");
  child.kill("SIGTERM");
  t.equal(await exited, 7, "the app's code");
  await reader.ended;
  t.equal(reader.rest(), "", "no torn line");
  const records = reader.lines.map((line) => JSON.parse(line) as { msg: string; path?: string });
  const paths = records.filter((record) => record.path?.startsWith("/line/")).map((record) => record.path);
  t.same(paths, Array.from({ length: 300 }, (_, index) => `/line/${index}`), "every access line, in order");
  const messages = records.map((record) => record.msg);
  const order = ["listening", "app started", "draining", "stopping app", "app exited", "stopped"].map((msg) => messages.indexOf(msg));
  t.ok(order.every((at) => at >= 0), "every lifecycle line");
  t.same([...order].sort((a, b) => a - b), order, `lifecycle lines in order: ${order.join(" < ")}`);
  // Lifecycle lines go ahead of access lines still queued for a stdout that is behind, so an access
  // line may follow "stopped"; no lifecycle line does.
  t.equal(records.filter((record) => record.path === undefined).at(-1)?.msg, "stopped", "the last lifecycle line");
});

t.test("the argument the exit past a stuck write re-executes the binary with can do nothing but exit with its code", { skip }, async (t) => {
  const run = (...args: string[]) => spawnSync(BINARY, ["--internal-exit-past-stuck-write", ...args], { env: { PATH: process.env.PATH }, encoding: "utf8" });
  t.match(run("3"), { status: 3, stdout: "", stderr: "" }, "exits with the code, nothing written, nothing started");
  t.match(run("0"), { status: 0, stdout: "", stderr: "" });
  t.match(run("256"), { status: 2 }, "anything else is an unknown option");
  t.match(run("3", "--listen"), { status: 2 });
});
