// Counts what a server does per request while a bounded load runs: system calls by name (strace -c over every thread) and context switches (perf stat, software events only).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The thread ids of `pid` (strace -p attaches one thread; a Node process has several). */
const threadsOf = (pid) => readdirSync(`/proc/${pid}/task`).map(Number);

/** Runs `tool` attached to `pids` while `load()` runs, then stops it with SIGINT (it writes its summary then) and resolves to the summary's text. */
async function attached(argv, load) {
  const out = join(mkdtempSync(join(tmpdir(), "rp-bench-trace-")), "summary.txt");
  const child = spawn(argv[0], [...argv.slice(1), "-o", out], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once("close", resolve));
  // Both tools say nothing when attached; a moment lets the attach finish before the load starts.
  await new Promise((resolve) => setTimeout(resolve, 300));
  let result;
  try {
    result = await load();
  } finally {
    child.kill("SIGINT");
    await exited;
  }
  let text = "";
  try {
    text = readFileSync(out, "utf8");
  } catch {
    throw new Error(`${argv[0]} wrote no summary: ${stderr.trim()}`);
  }
  return { text, result };
}

export const haveStrace = () => spawnSync("sh", ["-c", "command -v strace"]).status === 0;
export const havePerf = () => spawnSync("perf", ["stat", "-e", "task-clock", "true"], { encoding: "utf8" }).status === 0;

/** `strace -c -f` over every thread of each pid during load(); resolves to `{ calls: Map(name -> count), result }`. */
export async function straceCounts(pids, load) {
  const threads = pids.flatMap(threadsOf);
  const { text, result } = await attached(["strace", "-f", "-c", ...threads.flatMap((tid) => ["-p", String(tid)])], load);
  const calls = new Map();
  for (const line of text.split("\n")) {
    // % time     seconds  usecs/call     calls    errors syscall
    const match = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?([a-z_0-9]+)\s*$/.exec(line);
    if (match && match[3] !== "total") calls.set(match[3], { calls: Number(match[1]), errors: Number(match[2] ?? 0) });
  }
  return { calls, result };
}

/** `perf stat` of software events over each pid during load(); resolves to `{ counts: Map(event -> value), result }`. */
export async function perfCounts(pids, load, events = ["task-clock", "context-switches", "cpu-migrations"]) {
  const { text, result } = await attached(["perf", "stat", "-x", ",", "-e", events.join(","), "-p", pids.join(",")], load);
  const counts = new Map();
  for (const line of text.split("\n")) {
    const [value, , event] = line.split(",");
    if (event && events.includes(event)) counts.set(event, Number(value));
  }
  return { counts, result };
}
