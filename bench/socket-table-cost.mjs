// What reading and parsing /proc/net/udp, udp6 and unix costs with N sockets of each kind, in a network namespace of its own.
// Usage: node bench/socket-table-cost.mjs [--sockets 10000] [--runs 20]   (re-runs itself under `unshare -rn`; bundles the parsers from src with esbuild)
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = fileURLToPath(new URL(".", import.meta.url));
const { values: options } = parseArgs({ options: { sockets: { type: "string", default: "10000" }, runs: { type: "string", default: "20" }, inner: { type: "boolean", default: false } } });
if (!options.inner) {
  const result = spawnSync("unshare", ["-rn", process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), "--inner"], { stdio: "inherit" });
  process.exit(result.status ?? 1);
}
spawnSync("ip", ["link", "set", "lo", "up"]);
const work = mkdtempSync(join(tmpdir(), "rp-table-cost-"));
const entry = join(work, "entry.ts");
writeFileSync(entry, `export { UdpTableParser } from ${JSON.stringify(join(here, "../src/procfs/udp-table.ts"))};\nexport { UnixTableParser } from ${JSON.stringify(join(here, "../src/procfs/unix-table.ts"))};\n`);
execFileSync(join(here, "../node_modules/.bin/esbuild"), [entry, "--bundle", "--platform=node", "--format=esm", `--outfile=${join(work, "parsers.mjs")}`, "--log-level=warning"]);
const { UdpTableParser, UnixTableParser } = await import(join(work, "parsers.mjs"));

const HOLDERS = 8;
const count = Number(options.sockets);
const code = `const net = require("node:net"), dgram = require("node:dgram"); const [n, dir, index] = process.argv.slice(1); const held = []; let bound = 0;
  const one = () => { if (++bound === 2 * Number(n)) process.stdout.write("ready\\n"); };
  for (let k = 0; k < Number(n); k++) { const s = dgram.createSocket("udp4"); held.push(s); s.bind(0, "127.0.0.1", one); const u = net.createServer(); held.push(u); u.listen(dir + "/h" + index + "-" + k + ".sock", one); }
  process.stdin.resume(); process.stdin.on("end", () => process.exit(0));`;
const holders = await Promise.all(Array.from({ length: HOLDERS }, (_, index) => {
  const child = spawn(process.execPath, ["-e", code, String(Math.floor(count / HOLDERS)), work, String(index)], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve) => child.stdout.once("data", () => resolve(child)));
}));

const buffer = Buffer.allocUnsafe(64 * 1024);
function scan(path, parser) {
  const fd = openSync(path, "r");
  let bytes = 0;
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, null);
    if (read === 0) break;
    bytes += read;
    parser.push(buffer.subarray(0, read));
  }
  closeSync(fd);
  const parse = parser.finish();
  return { bytes, found: parse.readable ? (parse.listeningPorts ?? parse.listeningPaths).size : -1 };
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`\n${count} UDP sockets and ${count} listening unix sockets, ${options.runs} runs, medians (read + parse, synchronous in one thread)\n`);
console.log("| table | rows found | bytes | wall ms | user ms | system ms |\n| --- | --- | --- | --- | --- | --- |");
for (const [table, make] of [["udp", () => new UdpTableParser()], ["udp6", () => new UdpTableParser()], ["unix", () => new UnixTableParser()]]) {
  const wall = [], user = [], system = [];
  let last;
  for (let run = 0; run < Number(options.runs); run++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    last = scan(`/proc/net/${table}`, make());
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    user.push(used.user / 1000);
    system.push(used.system / 1000);
  }
  console.log(`| ${table} | ${last.found} | ${last.bytes} | ${median(wall).toFixed(2)} | ${median(user).toFixed(2)} | ${median(system).toFixed(2)} |`);
}
for (const holder of holders) holder.stdin.end();
