// A client that connects from the moment the program starts (a harness or a probe that polls the port): its first connection is answered, never reset by a socket that listened for a moment.
import { spawn } from "node:child_process";
import { connect } from "node:net";
import t from "tap";
import { BUILT_ARTIFACTS } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

/** Connects until a connection is taken (refusals: not listening yet), sends GET /healthz on it: "answered" or what ended it. */
async function firstConnection(port: number): Promise<string> {
  for (let attempt = 0; attempt < 20_000; attempt++) {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.on("connect", () => socket.write("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
      socket.on("data", (chunk: Buffer) => {
        socket.destroy();
        resolve(chunk.toString("latin1").startsWith("HTTP/1.1 200 ") ? "answered" : `answered ${chunk.toString("latin1").split("\r\n", 1)[0]}`);
      });
      socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED" ? "refused" : (error.code ?? error.message)));
      socket.on("close", () => resolve("closed without an answer"));
    });
    if (outcome !== "refused") return outcome;
  }
  return "never listened";
}

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: the first connection after start-up is answered`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    // Before the fix, 29 of 30 such first connections were reset (ECONNRESET).
    const outcomes: string[] = [];
    for (let start = 0; start < 8; start++) {
      const port = await closedPort();
      const child = spawn(artifact.command[0]!, [...artifact.command.slice(1), "--listen", `127.0.0.1:${port}`, "--log-level", "error"], { stdio: "ignore" });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      outcomes.push(await firstConnection(port));
      child.kill("SIGKILL");
      await exited;
    }
    t.strictSame(outcomes, Array(8).fill("answered"));
  });
}
