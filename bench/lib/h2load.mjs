// Runs h2load (nghttp2-client) for a bounded time and parses requests, requests/s, errors and mean latency from its report.
import { spawn } from "node:child_process";

const UNIT_MS = { us: 0.001, ms: 1, s: 1000 };

function toMs(text) {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? "");
  return match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
}

/**
 * `h2load -t1 -c<clients> -m<streams> -D<seconds>` on an h2c (prior knowledge) URL: bounded by
 * -D, and killed after `seconds` + 10 s if it hangs. Resolves to
 * `{ requests, rps, succeeded, errors, meanMs, maxMs }` (requests: the ones done).
 */
export function runH2load(url, { clients = 10, streams = 10, seconds = 5 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn("h2load", ["-t1", `-c${clients}`, `-m${streams}`, `-D${seconds}`, url]);
    const guard = setTimeout(() => child.kill("SIGKILL"), (seconds + 10) * 1000);
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      const counts = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(output);
      if (!counts) return reject(new Error(`h2load exited ${signal ?? code} without a report: ${output.trim().split("\n").slice(-3).join(" / ")}`));
      const [, , , done, succeeded, failed, errored, timeout] = counts.map(Number);
      const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(output)?.slice(1).map(Number) ?? [0, 0, 0, 0];
      const time = /time for request:\s+(\S+)\s+(\S+)\s+(\S+)/.exec(output);
      resolve({
        requests: done,
        succeeded,
        rps: Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(output)?.[1]),
        // Not 2xx, or started and never done: a proxy that answers 502 fast must not look fast.
        errors: Math.max(failed, errored + timeout) + status[1] + status[2] + status[3],
        meanMs: toMs(time?.[3]),
        maxMs: toMs(time?.[2]),
      });
    });
  });
}
