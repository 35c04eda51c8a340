// The h2c contenders: HAProxy with proto h2 on both sides, the naive node:http2 proxy, the node:http2 and codec floors, and readiness-proxy told to speak h2c; each a process of its own.
import { execFileSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startListening } from "../lib/processes.mjs";

/** HAProxy 2.6, one thread, h2c (prior knowledge) on the bind and to the server, connections reused by any stream. */
export function startH2Haproxy({ port, upstreamPort }) {
  const root = mkdtempSync(join(tmpdir(), "rp-bench-haproxy-h2-"));
  writeFileSync(
    join(root, "haproxy.cfg"),
    `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend proxy
  bind 127.0.0.1:${port} proto h2
  default_backend app
backend app
  http-reuse always
  server app 127.0.0.1:${upstreamPort} proto h2
`,
  );
  return startListening(["haproxy", "-db", "-f", join(root, "haproxy.cfg")], port, { stderr: openSync(join(root, "haproxy.log"), "w") });
}

/** bench/targets/node-h2-proxy.mjs on the runtime the binary embeds. */
export function startNodeH2Proxy({ runtime, here, port, upstreamUrl }) {
  return startListening([runtime, join(here, "targets/node-h2-proxy.mjs"), String(port), upstreamUrl], port);
}

/** bench/targets/node-h2-floor.mjs (core API, plain callbacks) on the runtime the binary embeds. */
export function startNodeH2Floor({ runtime, here, port, upstreamUrl }) {
  return startListening([runtime, join(here, "targets/node-h2-floor.mjs"), String(port), upstreamUrl], port);
}

/**
 * bench/targets/codec-h2-floor.ts, bundled by esbuild (from this checkout's src/h2-codec),
 * on the runtime the binary embeds: our own codec on both sides with nothing of the product around it.
 */
export function startCodecH2Floor({ runtime, here, port, upstreamUrl }) {
  const bundle = join(mkdtempSync(join(tmpdir(), "rp-bench-codec-floor-")), "codec-h2-floor.mjs");
  execFileSync(join(here, "../node_modules/.bin/esbuild"), ["--bundle", "--platform=node", "--format=esm", "--log-level=warning", join(here, "targets/codec-h2-floor.ts"), `--outfile=${bundle}`]);
  return startListening([runtime, bundle, String(port), upstreamUrl], port);
}

/**
 * The binary with `--upstream-protocol <protocol>`. A binary without HTTP/2 exits at once with a
 * usage error; that rejection is the caller's "unsupported by this binary".
 */
export async function startH2ReadinessProxy({ binary, port, upstreamUrl, protocol }) {
  const argv = [binary, "--listen", `127.0.0.1:${port}`, "--upstream", upstreamUrl, "--log-level", "warn", ...(protocol ? ["--upstream-protocol", protocol] : [])];
  const log = join(mkdtempSync(join(tmpdir(), "rp-bench-h2-ours-")), "stderr.log");
  try {
    return await startListening(argv, port, { stderr: openSync(log, "w") });
  } catch (error) {
    // Its own words (a usage error names the flag it does not know) say more than the exit code.
    const said = readFileSync(log, "utf8").trim().split("\n")[0];
    throw new Error(said ? `${error.message}: ${said}` : error.message);
  }
}
