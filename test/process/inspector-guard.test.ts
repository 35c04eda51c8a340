// An inspector open when main() starts is closed and warned about; and the runtime property the binary's cheap check relies on (src/inspector-guard.ts).
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import t from "tap";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";

const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;
const EMBEDDED_NODE = join(import.meta.dirname, `../../node_modules/node-linux-${process.arch}/bin/node`);

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

t.test("an inspector open at start is closed before the listener opens, with one warning", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  // --inspect opens it before any of our code runs: the state a SIGUSR1 before the guard leaves.
  const daemon = await spawnDaemon(t, [process.execPath, "--inspect=127.0.0.1:0", ...bundle.command.slice(1)], []);
  const inspectorPort = Number(/Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(daemon.stderr())?.[1]);
  t.ok(inspectorPort > 0, "the runtime opened an inspector");
  const warnings = daemon.records.filter((record) => record.msg === "an inspector opened by SIGUSR1 during start-up was closed");
  t.equal(warnings.length, 1);
  t.equal(warnings[0]?.level, 40);
  t.ok(daemon.records.indexOf(warnings[0]!) < daemon.records.findIndex((record) => record.msg === "listening"), "closed before the listener opened");
  t.equal(await portAccepts(inspectorPort), false, "its port is closed");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("no inspector, no warning", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const daemon = await spawnDaemon(t, bundle.command, []);
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  t.notOk(daemon.records.some((record) => record.msg === "an inspector opened by SIGUSR1 during start-up was closed"));
});

t.test("the binary runs with --inspect-port=0, which the cheap check in closeInspectorIfOpen needs", async (t) => {
  const seaConfig = JSON.parse(readFileSync(join(import.meta.dirname, "../../sea-config.json"), "utf8")) as { execArgv: string[] };
  t.ok(seaConfig.execArgv.includes("--inspect-port=0"));
});

t.test("the embedded runtime, with --inspect-port=0: process.debugPort is 0 until SIGUSR1 opens an inspector, then that inspector's port", { skip: !existsSync(EMBEDDED_NODE) && "no embedded runtime: run make install" }, async (t) => {
  // What src/inspector-guard.ts relies on to skip loading node:inspector; a runtime upgrade that changed it fails here.
  const script = [
    "const before = process.debugPort;",
    'process.kill(process.pid, "SIGUSR1");',
    "const poll = setInterval(() => {",
    '  const url = require("node:inspector").url();',
    "  if (url === undefined) return;",
    "  clearInterval(poll);",
    "  console.log(JSON.stringify({ before, after: process.debugPort, urlPort: Number(new URL(url).port) }));",
    '  require("node:inspector").close();',
    "}, 5);",
  ].join("\n");
  const run = await runToExit([EMBEDDED_NODE, "--inspect-port=0", "-e", script]);
  t.equal(run.code, 0, run.stderr);
  const { before, after, urlPort } = JSON.parse(run.stdout) as { before: number; after: number; urlPort: number };
  t.equal(before, 0, "0 before any inspector is open");
  t.ok(after > 0, "the bound port once one is");
  t.equal(after, urlPort);
});
