// The memory of requests waiting in the binary's queue, alone (make bench runs it as section 6): RssAnon before and with 10,000 queued.
// Usage: node bench/queue-memory.mjs [--binary dist/readiness-proxy] [--requests 10000]
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { QUEUED_REQUESTS, queueMemory } from "./sections/queue-memory.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const binary = option("binary", join(here, "../dist/readiness-proxy"));
const requests = Number(option("requests", String(QUEUED_REQUESTS)));
if (!Number.isInteger(requests) || requests < 1) {
  console.error(`--requests: expected a positive integer, got "${option("requests")}"`);
  process.exit(2);
}
console.log((await queueMemory({ binary, requests })).markdown);
