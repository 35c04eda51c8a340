// Opens idle keep-alive clients in a child (bench/lib/idle-clients.mjs) and waits, bounded, until every one has its answer.
import { spawn } from "node:child_process";
import { join } from "node:path";

const here = import.meta.dirname;

/**
 * `count` clients of `protocol` ("h1" or "h2") on 127.0.0.1:`port`, each after one GET; resolves
 * with the child and whether all were answered within `deadlineMs` (a target that cannot hold
 * them all is reported, not waited for).
 */
export async function openIdleClients(node, port, count, protocol, deadlineMs) {
  const clients = spawn(node, [join(here, "idle-clients.mjs"), String(port), String(count), protocol], { stdio: ["pipe", "pipe", "inherit"] });
  const ready = await new Promise((done) => {
    const timer = setTimeout(() => done(false), deadlineMs);
    clients.stdout.once("data", () => (clearTimeout(timer), done(true)));
    clients.once("exit", () => (clearTimeout(timer), done(false)));
  });
  return { clients, ready };
}
