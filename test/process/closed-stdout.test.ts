// `readiness-proxy --help | head`: a stdout whose reader has gone is no error of ours: no stack trace, the command's own exit code, for the bundle and the binary.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import t from "tap";
import { hasPython } from "../helpers/port-holder.js";
import { BINARY, BUNDLE } from "../helpers/spawn-daemon.js";

/** Runs the command with a stdout pipe whose read end was closed before it started: every write is EPIPE. */
const WITH_CLOSED_STDOUT = `
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
done = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stdout.write(f"{done.returncode}\\n{done.stderr.decode()}")
`;

function runWithClosedStdout(command: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile("/usr/bin/python3", ["-c", WITH_CLOSED_STDOUT, ...command], { timeout: 30_000 }, (error, stdout) => {
      if (error) return reject(error);
      const [code, ...stderr] = stdout.split("\n");
      resolve({ code: Number(code), stderr: stderr.join("\n") });
    }),
  );
}

const python = hasPython();
for (const [name, command] of [
  ["bundle", [process.execPath, BUNDLE]],
  ["binary", [BINARY]],
] as const) {
  const missing = !python ? "python3 is needed to hand the child a closed pipe" : !existsSync(command.at(-1)!) ? `${command.at(-1)} is not built (make build)` : false;
  t.test(`${name}: --help and --version into a closed pipe exit 0 without a stack trace`, { skip: missing }, async (t) => {
    for (const flag of ["--help", "--version"]) {
      const run = await runWithClosedStdout([...command, flag]);
      t.equal(run.code, 0, `${flag}: exit 0`);
      t.equal(run.stderr, "", `${flag}: nothing on stderr`);
    }
    const usage = await runWithClosedStdout([...command, "--no-such-flag"]);
    t.equal(usage.code, 2, "a usage error keeps its exit code 2");
    t.match(usage.stderr, /^error: unknown option '--no-such-flag'/, "and its one line");
    t.notMatch(usage.stderr, /EPIPE|at /, "no stack trace");
  });
}
