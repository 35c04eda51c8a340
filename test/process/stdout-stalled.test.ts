// Issues 37.3 and 52.7 against the binary: stdout a pipe whose reader stopped (full), or a socket nobody reads, costs log lines, never the event loop: /healthz and a 502 are answered, a SIGTERM is obeyed within its timeouts, and lines flow again once it reads.
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { closeSync, existsSync, writeSync } from "node:fs";
import t, { type Test } from "tap";
import { reopenPipeNonBlocking } from "../../src/access-log/stdout-sink.js";
import { lineReader, makeFifo } from "../helpers/fifo.js";
import { send } from "../helpers/http-client.js";
import { BINARY } from "../helpers/spawn-daemon.js";
import { within } from "../helpers/test-doubles.js";
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
