// Summarises a V8 .cpuprofile (node --cpu-prof): self time per function, the top N, and the share of GC, idle and the runtime's own frames; with --inclusive, the time under named functions (callees included), per request when --requests is given.
// Usage: node bench/lib/profile-summary.mjs FILE.cpuprofile [N] [--inclusive name,name] [--cpu-per-request MICROS]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const valueOf = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const inclusive = valueOf("--inclusive")?.split(",") ?? [];
/** The run's measured CPU per request: a share of the samples is turned into µs of it (samples are wall time, which a loaded machine inflates). */
const cpuPerRequest = Number(valueOf("--cpu-per-request") ?? "0");
const [file, top = "25"] = args.filter((arg, index) => !arg.startsWith("--") && !args[index - 1]?.startsWith("--"));
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map();
// timeDeltas[i] is the time before sample i: charge it to the sample's frame.
profile.samples.forEach((id, index) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const byFunction = new Map();
// Where the time is: our bundle's JS, Node's own JS (streams, net, timers), native frames by name (a system call's wrapper holds the syscall's time, and a descheduled thread's samples), GC, and the rest of V8 and Node's C++ ("(program)").
const categories = new Map();
const categoryOf = ({ url, functionName }) => {
  if (functionName === "(idle)") return "idle";
  if (functionName === "(garbage collector)") return "garbage collector";
  if (functionName === "(program)") return "(program): V8 and Node C++ outside JS";
  if (url.includes("readiness-proxy")) return "readiness-proxy JS (the bundle)";
  if (url.startsWith("node:")) return "Node's JS (node:internal streams, net, timers)";
  if (!url) return "native functions called from JS (writev, writeLatin1String, ...)";
  return "other JS";
};
let total = 0;
for (const [id, us] of selfUs) {
  const { callFrame } = byId.get(id);
  const where = callFrame.url ? `${callFrame.url.split("/").slice(-2).join("/")}:${callFrame.lineNumber + 1}` : "";
  const key = `${callFrame.functionName || "(anonymous)"} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const category = categoryOf(callFrame);
  categories.set(category, (categories.get(category) ?? 0) + us);
  total += us;
}
const busy = total - (byFunction.get("(idle)") ?? 0);
console.log(`samples: ${profile.samples.length}, ${(total / 1000).toFixed(0)} ms in all, ${(busy / 1000).toFixed(0)} ms not idle`);
console.log("| where (self time) | ms | share of the non-idle time |\n| --- | --- | --- |");
for (const [name, us] of [...categories].filter(([name]) => name !== "idle").sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${(us / 1000).toFixed(1)} | ${((us / busy) * 100).toFixed(1)}% |`);
console.log("\n| function (self time) | ms | share of the non-idle time |\n| --- | --- | --- |");
for (const [name, us] of [...byFunction].filter(([name]) => name !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
  console.log(`| ${name.replaceAll("|", "\\|")} | ${(us / 1000).toFixed(1)} | ${((us / busy) * 100).toFixed(1)}% |`);
}

if (inclusive.length > 0) {
  // A sample counts once for a name however often it is on the stack (recursion).
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const under = new Map(inclusive.map((name) => [name, 0]));
  /** Per name, the self time of each function under it. */
  const inside = new Map(inclusive.map((name) => [name, new Map()]));
  for (const [id, us] of selfUs) {
    const names = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) names.add(byId.get(at).callFrame.functionName);
    const self = byId.get(id).callFrame.functionName || "(anonymous)";
    for (const name of inclusive) {
      if (!names.has(name)) continue;
      under.set(name, under.get(name) + us);
      inside.get(name).set(self, (inside.get(name).get(self) ?? 0) + us);
    }
  }
  const share = (us) => us / busy;
  console.log(`\n| under (inclusive time) | ms | share of the non-idle time |${cpuPerRequest ? " µs of CPU per request |" : ""} most self time under it |\n| --- | --- | --- |${cpuPerRequest ? " --- |" : ""} --- |`);
  for (const [name, us] of under) {
    const most = [...inside.get(name)].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([self, selfUs]) => `${self} ${((selfUs / busy) * 100).toFixed(1)}%`).join(", ");
    console.log(`| ${name} | ${(us / 1000).toFixed(1)} | ${(share(us) * 100).toFixed(1)}% |${cpuPerRequest ? ` ${(share(us) * cpuPerRequest).toFixed(2)} |` : ""} ${most} |`);
  }
}
