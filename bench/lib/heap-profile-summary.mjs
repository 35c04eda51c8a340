// Summarises a sampling heap profile (bench/lib/heap-sampling-preload.cjs) as bytes allocated per request, by allocating function.
// Usage: node bench/lib/heap-profile-summary.mjs FILE.heapprofile REQUESTS [N]
import { readFileSync } from "node:fs";

const [file, requests, top = "15"] = process.argv.slice(2);
const { head } = JSON.parse(readFileSync(file, "utf8"));
const bytesByFunction = new Map();
const visit = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || "(anonymous)"} ${url ? `${url.split("/").slice(-2).join("/")}:${lineNumber + 1}` : ""}`.trim();
  if (node.selfSize > 0) bytesByFunction.set(key, (bytesByFunction.get(key) ?? 0) + node.selfSize);
  for (const child of node.children) visit(child);
};
visit(head);
const total = [...bytesByFunction.values()].reduce((sum, bytes) => sum + bytes, 0);
const perRequest = (bytes) => (bytes / Number(requests)).toFixed(0);
console.log(`sampled: ${perRequest(total)} bytes of V8 heap allocated per request (${requests} requests)`);
console.log("| allocated by (self) | bytes per request |\n| --- | --- |");
for (const [key, bytes] of [...bytesByFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`| ${key} | ${perRequest(bytes)} |`);
