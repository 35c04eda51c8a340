// Section 4: parse and scan cost against table size (synthetic kernel-format tables), and the real kernel with ~10k sockets.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, spread, table } from "../lib/stats.mjs";

const TCP_HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
const TCP6_HEADER = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
const hex = (value, width) => value.toString(16).toUpperCase().padStart(width, "0");

/** A tcp table of `rows` ESTABLISHED rows (the required port absent: a full scan), padded to 149 columns like the kernel's. */
function syntheticTcp(rows) {
  const lines = [TCP_HEADER.padEnd(149)];
  for (let index = 0; index < rows; index++) {
    const row = `${String(index).padStart(4)}: 0100007F:${hex(20000 + (index % 40000), 4)} 0100007F:${hex(8000 + (index % 100), 4)} 01 00000000:00000000 00:00000000 00000000     0        0 ${100000 + index} 1 0000000000000000 20 4 30 10 -1`;
    lines.push(row.padEnd(149));
  }
  return `${lines.join("\n")}\n`;
}

/** Bundles the scanner from src for the measured runtime (the daemon's own code, not a copy). */
function bundleScanner(root, out) {
  const entry = join(out, "scanner-entry.ts");
  writeFileSync(entry, `export { ListenerScanner } from ${JSON.stringify(join(root, "src/procfs/listener-scan.ts"))};\nexport { TcpTableParser } from ${JSON.stringify(join(root, "src/procfs/tcp-table.ts"))};\n`);
  const bundle = join(out, "scanner.mjs");
  execFileSync(join(root, "node_modules/.bin/esbuild"), [entry, "--bundle", "--platform=node", "--format=esm", `--outfile=${bundle}`, "--log-level=warning"]);
  return bundle;
}

export async function scanCost({ runtime, root, here }) {
  const work = mkdtempSync(join(tmpdir(), "rp-bench-scan-"));
  const scanner = bundleScanner(root, work);
  const sizes = [1_000, 10_000, 100_000];
  const roots = sizes.map((rows) => {
    const dir = join(work, `rows-${rows}`);
    mkdirSync(join(dir, "net"), { recursive: true });
    writeFileSync(join(dir, "net/tcp"), syntheticTcp(rows));
    writeFileSync(join(dir, "net/tcp6"), `${TCP6_HEADER}\n`);
    return dir;
  });
  const output = execFileSync(runtime, [join(here, "sections/scan-worker.mjs"), scanner, ...roots], { encoding: "utf8" });
  const measured = output.trim().split("\n").map((line) => JSON.parse(line));
  const rows = measured.map((result, index) => [
    sizes[index].toLocaleString("en"),
    (result.bytes / 1e6).toFixed(1),
    spread(result.parseMs, 2),
    `${(result.bytes / 1e6 / (median(result.parseMs) / 1000) / 1000).toFixed(2)}`,
    spread(result.scanMs, 2),
    result.maxLoopDelayMs.toFixed(1),
  ]);
  const parsed100k = median(measured.at(-1).parseMs);
  let kernel = "not measured: needs root and iproute2 for a private network namespace";
  if (process.getuid?.() === 0 && spawnSync("ip", ["-V"]).status === 0) kernel = measureKernel(runtime, here, scanner);
  return {
    markdown: [
      table(["rows", "MB", "parse ms (hot 64 KiB buffer)", "parse GB/s", "scan ms (read + parse, both tables)", "max event-loop delay during scans, ms"], rows),
      "",
      kernel,
    ].join("\n"),
    parse100kMs: parsed100k,
  };
}

function measureKernel(runtime, here, scanner) {
  const namespace = `rp-bench-${process.pid}`;
  spawnSync("ip", ["netns", "add", namespace]);
  try {
    spawnSync("ip", ["-n", namespace, "link", "set", "lo", "up"]);
    const pairs = 5000;
    const result = spawnSync("ip", ["netns", "exec", namespace, runtime, join(here, "sections/kernel-table.mjs"), scanner, String(pairs)], { encoding: "utf8" });
    if (result.status !== 0) return `real kernel: failed (${result.stderr.trim().split("\n").at(-1)})`;
    const measured = JSON.parse(result.stdout.trim());
    return table(
      [`real kernel, ${measured.sockets.toLocaleString("en")} loopback sockets in a fresh netns (${(measured.bytes / 1e6).toFixed(1)} MB of /proc/net/tcp)`, "median (min-max) ms of 15, interleaved"],
      [
        ["kernel produces both tables (the same read loop, no parsing)", spread(measured.readMs, 1)],
        ["readiness-proxy scan (read + parse, both tables)", spread(measured.scanMs, 1)],
        ["scan / bare read (target ≤ 1.2x)", `${(median(measured.scanMs) / median(measured.readMs)).toFixed(2)}x`],
        ["`ss -Hltn` (netlink, LISTEN only; includes its exec)", spread(measured.ssMs, 1)],
      ],
    );
  } finally {
    spawnSync("ip", ["netns", "del", namespace]);
  }
}
