// Runs inside the measured runtime: scan and parse times of synthetic tables, and event-loop delay during scans.
// Usage: node scan-worker.mjs BUNDLED_SCANNER_MJS PROC_ROOT...   (prints one JSON line per root)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const [scannerModule, ...roots] = process.argv.slice(2);
const { ListenerScanner, TcpTableParser } = await import(scannerModule);
const REPEATS = 15;

for (const root of roots) {
  const scanner = new ListenerScanner({ procRoot: root });
  const bytes = readFileSync(join(root, "net/tcp"));
  const chunk = 64 * 1024;
  // Parse only, as the daemon parses: each 64 KiB chunk is first copied into one reused buffer
  // (as read() fills it, hot in cache), and only the parser's push() calls are timed.
  const reused = Buffer.allocUnsafe(chunk);
  const parse = () => {
    const parser = new TcpTableParser();
    let parsing = 0;
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      const length = bytes.copy(reused, 0, offset, offset + chunk);
      const started = performance.now();
      parser.push(reused.subarray(0, length));
      parsing += performance.now() - started;
    }
    const started = performance.now();
    const result = parser.finish();
    return { result, ms: parsing + performance.now() - started };
  };
  for (let warm = 0; warm < 5; warm++) {
    parse();
    await scanner.scan();
  }
  const parseMs = [];
  for (let run = 0; run < REPEATS; run++) {
    const { result, ms } = parse();
    parseMs.push(ms);
    if (!result.readable) throw new Error(`synthetic table unreadable: ${result.reason}`);
  }
  // Scans alone while the delay monitor runs: a synchronous parse above would show up as delay.
  const scanMs = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  for (let run = 0; run < REPEATS; run++) {
    const started = performance.now();
    await scanner.scan();
    scanMs.push(performance.now() - started);
  }
  delay.disable();
  console.log(JSON.stringify({ root, bytes: bytes.length, parseMs, scanMs, maxLoopDelayMs: delay.max / 1e6 }));
}
