// Summarises a sampling heap profile (bench/lib/heap-sampling-preload.cjs) as bytes allocated per request, by allocating function; with --sites, what the runtime allocates is charged to the frame of ours that called it.
// Usage: node bench/lib/heap-profile-summary.mjs FILE.heapprofile REQUESTS [N] [--sites]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const sites = args.includes("--sites");
const [file, requests, top = "15"] = args.filter((arg) => arg !== "--sites");
const { head } = JSON.parse(readFileSync(file, "utf8"));
const bytesByFunction = new Map();
const frameName = ({ functionName, url, lineNumber }) => `${functionName || "(anonymous)"} ${url ? `${url.split("/").slice(-2).join("/")}:${lineNumber + 1}` : ""}`.trim();
/** Our bundle's frames (any build of it: dist/readiness-proxy.cjs or a copy passed as --bundle). */
const ours = ({ url }) => url.endsWith(".cjs") && !url.includes("preload");
// `caller`: the innermost frame of ours above this node (what a runtime function or "(V8 API)" was called for).
const visit = (node, caller) => {
  const self = frameName(node.callFrame);
  const own = ours(node.callFrame);
  const key = !sites || own || caller === undefined ? self : `${self} <- ${caller}`;
  if (node.selfSize > 0) bytesByFunction.set(key, (bytesByFunction.get(key) ?? 0) + node.selfSize);
  for (const child of node.children) visit(child, own ? self : caller);
};
visit(head, undefined);
const total = [...bytesByFunction.values()].reduce((sum, bytes) => sum + bytes, 0);
const perRequest = (bytes) => (bytes / Number(requests)).toFixed(0);
console.log(`sampled: ${perRequest(total)} bytes of V8 heap allocated per request (${requests} requests)`);
console.log(`| allocated by (self${sites ? " <- the frame of ours that called it" : ""}) | bytes per request |\n| --- | --- |`);
for (const [key, bytes] of [...bytesByFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`| ${key} | ${perRequest(bytes)} |`);
