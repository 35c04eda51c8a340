// The real command line parsed in-process for option tests: what it printed, and the Config when it runs.
import { parseCommandLine } from "../../src/cli.js";
import type { Config } from "../../src/config/config.js";

/** Parses argv and env as the binary does, keeping stdout and stderr as text. */
export function runCommandLine(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let out = "";
  let err = "";
  const result = parseCommandLine(argv, env, { writeOut: (text) => (out += text), writeErr: (text) => (err += text) });
  return { result, out, err };
}

/** The Config of a command line that runs; throws with the usage error otherwise. */
export function configOf(argv: string[], env: NodeJS.ProcessEnv = {}): Config {
  const { result, err } = runCommandLine(argv, env);
  if (result.action !== "run") throw new Error(`refused: ${err}`);
  return result.config;
}
