// Runs wrk (bounded by -d) and parses requests, requests/s and latency percentiles from its --latency report.
import { spawn } from "node:child_process";

const UNIT_MS = { us: 0.001, ms: 1, s: 1000 };

function toMs(text) {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
}

/**
 * Seconds per target and round in sections 1b and 1c: half of section 1's, to keep `make bench`
 * near five minutes. At one connection 2 s is still thousands of requests, a p99 over tens of them.
 */
export const shortRunSeconds = (seconds) => Math.max(1, Math.floor(seconds / 2));

/**
 * `wrk -t1 -c<connections> -d<seconds>s --latency [-s script] url` on loopback. `signal` ends it
 * early with SIGINT, on which wrk stops and still prints its report.
 */
export function runWrk(url, { connections = 50, seconds = 5, threads = 1, script, signal } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, "--latency", "--timeout", "5s", ...(script ? ["-s", script] : []), url]);
    signal?.addEventListener("abort", () => child.kill("SIGINT"), { once: true });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${output}`));
      const requests = Number(/(\d+) requests in/.exec(output)?.[1]);
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
      const p50 = toMs(/\s50%\s+(\S+)/.exec(output)?.[1] ?? "");
      const p99 = toMs(/\s99%\s+(\S+)/.exec(output)?.[1] ?? "");
      const socketErrors = (/Socket errors:(.*)/.exec(output)?.[1] ?? "").match(/\d+/g) ?? [];
      const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0) + socketErrors.reduce((sum, n) => sum + Number(n), 0);
      // Which errors, as wrk names them: a timeout and a refused connection are different findings.
      const detail = [/Socket errors:\s*(.*)/.exec(output)?.[1].trim(), /Non-2xx or 3xx responses: \d+/.exec(output)?.[0]].filter(Boolean).join("; ");
      resolve({ requests, rps, p50, p99, errors, errorDetail: detail || undefined });
    });
  });
}
