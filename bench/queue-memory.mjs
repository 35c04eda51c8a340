// Section 6 alone (make bench runs it too): memory per queued and idle client, and after a burst of them ends (issue 27).
// Usage: node bench/queue-memory.mjs [--binary dist/readiness-proxy] [--baseline PATH] [--clients 5000] [--rounds 1] [--after-seconds 30]
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLIENTS, queueMemory } from "./sections/queue-memory.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const count = (name, fallback) => {
  const value = Number(option(name, String(fallback)));
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name}: expected a positive integer, got "${option(name)}"`);
    process.exit(2);
  }
  return value;
};
const binary = option("binary", join(root, "dist/readiness-proxy"));
const baseline = option("baseline", undefined);
const runtime = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
const result = await queueMemory({ binary, baseline, runtime, root, here, clients: count("clients", CLIENTS), rounds: count("rounds", 1), afterSeconds: count("after-seconds", 30) });
console.log(result.markdown);
