// udp: and unix: required listeners on the binary, against real sockets a python process binds: abstract, bound but not listening, closed, removed.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

/** A python process holding sockets; `do` resolves once the socket exists (or is gone). */
function socketHolder(t: Test) {
  const child = spawn("python3", [join(import.meta.dirname, "../helpers/socket-holder.py")], { stdio: ["pipe", "pipe", "inherit"] });
  t.teardown(() => child.kill("SIGKILL"));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    async do(command: string): Promise<string> {
      child.stdin!.write(`${command}\n`);
      const reply = await lines.next();
      if (typeof reply.value !== "string" || !reply.value.startsWith("ok")) throw new Error(`socket holder: ${String(reply.value)}`);
      return reply.value.slice(3);
    },
  };
}

t.test("udp: and unix: listeners, named and not, through bind, listen, close and unlink", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rp-kinds-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const abstract = `@rp-kinds-${process.pid}`;
  const holder = socketHolder(t);
  const udpPort = Number(await holder.do("udp u"));
  // TTL 0: every /readyz runs its own scan, so each answer sees the sockets as the last command left them.
  const daemon = await spawnDaemon(t, [BINARY], [
    "--readiness-cache-ttl", "0s",
    "--readiness-required-listener", `udp:${udpPort}`,
    "--readiness-required-listener", `unix:${dir}/fpm.sock`,
    "--readiness-required-listener", `abs=unix:${abstract}`,
  ]);
  const readyz = async () => {
    const reply = await send(daemon.port, "/readyz");
    return { status: reply.status, body: reply.json() };
  };
  const names = ["listener-udp-" + udpPort, "listener-unix-fpm-sock", "abs"];
  t.same(await readyz(), { status: 503, body: { status: "not ready", missingListeners: [`unix:${dir}/fpm.sock`, `unix:${abstract}`], failedChecks: names.slice(1) } }, "UDP bound");

  await holder.do(`bind fpm ${dir}/fpm.sock`);
  t.same((await readyz()).body, { status: "not ready", missingListeners: [`unix:${dir}/fpm.sock`, `unix:${abstract}`], failedChecks: names.slice(1) }, "a unix socket bound but not listening does not count");
  await holder.do("close fpm");
  await holder.do(`unlink x ${dir}/fpm.sock`);
  await holder.do(`listen fpm ${dir}/fpm.sock`);
  await holder.do(`listen abs ${abstract}`);
  t.same(await readyz(), { status: 200, body: { status: "ready" } }, "every kind listening");
  const verbose = await send(daemon.port, "/readyz?verbose");
  t.equal(verbose.text(), `[+]listener-udp-${udpPort} ok\n[+]listener-unix-fpm-sock ok\n[+]abs ok\n[+]shutdown ok\nreadyz check passed\n`);
  t.equal((await send(daemon.port, "/readyz/abs")).status, 200);

  // A listening socket whose path was removed is still listed under that path (the kernel keeps the name it was bound to).
  await holder.do(`unlink x ${dir}/fpm.sock`);
  t.equal((await readyz()).status, 200, "removed path, socket still open: the table still names it");
  await holder.do("close fpm");
  await holder.do("close u");
  t.same((await readyz()).body, { status: "not ready", missingListeners: [`udp:${udpPort}`, `unix:${dir}/fpm.sock`], failedChecks: names.slice(0, 2) }, "closed");
  const missingLine = await daemon.waitForLog("required listeners missing; reporting not ready");
  t.same(missingLine.missing, [`unix:${dir}/fpm.sock`, `unix:${abstract}`], "the first missing line names them as given");
});
