// Runs, once while the SEA's startup snapshot is built, the start-up paths every start takes, so their functions go into the snapshot compiled instead of being compiled at each start.
import { isIPv6 } from "node:net";
import { parseCommandLine } from "./cli.js";
import { createLogger } from "./logger.js";

/**
 * Only what leaves nothing behind: no handle, timer, listener or destination may be open when
 * the snapshot is taken (the builder refuses one), and nothing read here (argv, env) is kept;
 * each start reads its own in main(). Measured with `node bench/run.mjs --only startup`.
 */
export function warmUpStartPaths(): void {
  const quiet = { writeOut() {}, writeErr() {} };
  parseCommandLine(["--listen", "127.0.0.1:8080", "--upstream", "http://127.0.0.1:8081", "--log-level", "info"], {}, quiet);
  parseCommandLine(["--bogus"], {}, quiet);
  // node:net's listen checks every address it resolved with this regular expression (5 ms to compile at the first call).
  isIPv6("fe80::1");
  createLogger("info", { write() {} }).info({ warm: true }, "warm-up");
}
