// Summarises a V8 .cpuprofile (node --cpu-prof): self time per function, the top N, and the share of GC, idle and the runtime's own frames.
// Usage: node bench/lib/profile-summary.mjs FILE.cpuprofile [N]
import { readFileSync } from "node:fs";

const [file, top = "25"] = process.argv.slice(2);
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
