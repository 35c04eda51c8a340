// Starting and measuring the processes under test: wait for a port, CPU time and anonymous memory from /proc.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Starts a long-running process; `stdout`/`stderr` take a file descriptor so output cannot block on a full pipe. */
export function start(argv, { env = process.env, stdout = "ignore", stderr = "inherit" } = {}) {
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ["ignore", stdout, stderr] });
  child.on("error", (error) => {
    console.error(`cannot start ${argv[0]}: ${error.message}`);
  });
  return child;
}

/** Resolves once 127.0.0.1:`port` accepts a connection; rejects after `timeoutMs`. */
export async function waitForPort(port, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not open within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts a server and resolves once it accepts connections on `port`. If it exits first or never
 * listens, it is stopped and the promise rejects with the reason, so no caller is left holding a
 * half-started process.
 */
export async function startListening(argv, port, options) {
  const child = start(argv, options);
  const failed = new Promise((_resolve, reject) => {
    child.once("error", (error) => reject(new Error(`cannot start ${argv[0]}: ${error.message}`)));
    child.once("exit", (code, signal) => reject(new Error(`${argv[0]} exited (${signal ?? `code ${code}`}) before listening on ${port}`)));
  });
  try {
    await Promise.race([waitForPort(port), failed]);
  } catch (error) {
    await stop(child);
    throw error;
  }
  failed.catch(() => {}); // an exit after this point is the caller's business (stop() awaits it)
  return child;
}

/**
 * User + system CPU time of `pid` in microseconds (from /proc/<pid>/stat, fields 14 and 15). For a
 * thread group leader the kernel sums every thread, those that have exited included, so a Go
 * runtime's or HAProxy's threads are counted; child processes are not (see childPids).
 */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** Summed CPU microseconds of several pids (an nginx master and its worker). */
export function cpuMicrosOf(pids) {
  return pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
}

/** RssAnon of `pid` in MB: resident memory that is the process's own, not the mapped binary. */
export function rssAnonMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/RssAnon:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

/** Summed RssAnon in MB of several pids (a master and its workers). */
export function rssAnonMbOf(pids) {
  return pids.reduce((sum, pid) => sum + rssAnonMb(pid), 0);
}

/** Children of `pid` (nginx workers), from /proc/<pid>/task/<pid>/children. */
export function childPids(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Stops a child and waits for it to exit (SIGKILL after 5 s). */
export async function stop(child) {
  // No pid: it never started (spawn failed), so no exit will come.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * The scheduler's view of `pids`, summed over every thread: nanoseconds on a CPU and waiting on a
 * run queue (runnable, not running: /proc/<pid>/task/<tid>/schedstat), and the involuntary
 * context switches (preemptions, from each thread's status).
 */
export function schedulerTotals(pids) {
  const totals = { runNs: 0, waitNs: 0, involuntary: 0 };
  for (const pid of pids) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tids) {
      try {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ").map(Number);
        totals.runNs += run;
        totals.waitNs += wait;
        totals.involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"))?.[1] ?? 0);
      } catch {
        // a thread that exited between the listing and the read
      }
    }
  }
  return totals;
}
