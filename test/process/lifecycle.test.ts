// The shipped program as a process: graceful shutdown with a stream open, a second signal, start-up failures.
import { mkdtempSync, chmodSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { deferred } from "../helpers/test-doubles.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: lifecycle`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    t.test("SIGTERM with an SSE stream open: draining, the stream completes, exit 0", async (t) => {
      const upstream = await startUpstream(t);
      const finishStream = deferred();
      upstream.handleRaw(async (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: 1\n\n");
        await finishStream.promise;
        res.end("data: 2\n\n");
      });
      const daemon = await spawnDaemon(t, artifact.command, ["--upstream", upstream.url, "--shutdown-delay", "1s", "--shutdown-timeout", "30s"]);
      const streamed = new Promise<string>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: daemon.port, path: "/stream", agent: false }, (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString();
            if (text === "data: 1\n\n") daemon.child.kill("SIGTERM");
          });
          res.on("end", () => resolve(res.complete ? text : "incomplete"));
        });
        req.on("error", reject);
        req.end();
      });
      await daemon.waitForLog("draining");
      const readyz = await send(daemon.port, "/readyz");
      t.equal(readyz.status, 503);
      t.equal(readyz.text(), '{"status":"not ready","draining":true,"failedChecks":["shutdown"]}');
      t.equal((await send(daemon.port, "/health")).status, 200, "liveness unchanged while draining");
      finishStream.resolve();
      t.equal(await streamed, "data: 1\n\ndata: 2\n\n", "the open stream ran to its end");
      t.equal(await daemon.exited, 0);
      const messages = daemon.records.map((record) => record.msg);
      t.ok(messages.indexOf("draining") < messages.indexOf("stopped"), "draining, then stopped");
    });

    t.test("a second signal exits at once", async (t) => {
      const daemon = await spawnDaemon(t, artifact.command, ["--shutdown-delay", "10m"]);
      daemon.child.kill("SIGINT");
      await daemon.waitForLog("draining");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 1, "exit 1: in-flight work was cut");
    });

    t.test("listen address in use: exit 1, one line", async (t) => {
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
      t.teardown(() => holder.close());
      const { port } = holder.address() as AddressInfo;
      const result = await runToExit([...artifact.command, "--listen", `127.0.0.1:${port}`]);
      t.equal(result.code, 1);
      t.equal(result.stderr, `error: cannot listen on 127.0.0.1:${port}: address already in use\n`);
    });

    t.test("usage errors: exit 2, one line, no stack", async (t) => {
      for (const [args, line] of [
        [["--readiness-required-listener", "70000"], 'error: --readiness-required-listener: expected a port 1..65535, got "70000"'],
        [["--x"], "error: unknown option '--x'"],
        [["--readiness-cache-ttl", "5"], 'error: --readiness-cache-ttl: expected a duration like 500ms, 1s or 1m30s, got "5"'],
      ] as const) {
        const result = await runToExit([...artifact.command, ...args]);
        t.equal(result.code, 2, args.join(" "));
        t.equal(result.stderr, `${line}\n`);
        t.equal(result.stdout, "");
      }
    });

    t.test("an unreadable --error-pages-dir is a start-up error", async (t) => {
      const missing = join(mkdtempSync(join(tmpdir(), "rp-pages-")), "absent");
      const result = await runToExit([...artifact.command, "--error-pages-dir", missing]);
      t.equal(result.code, 2);
      t.equal(result.stderr, `error: --error-pages-dir: expected a readable directory (ENOENT), got ${JSON.stringify(missing)}\n`);
      const locked = mkdtempSync(join(tmpdir(), "rp-pages-"));
      chmodSync(locked, 0o000);
      t.teardown(() => chmodSync(locked, 0o700));
      if (process.getuid?.() === 0) t.comment("running as root: a mode-000 directory is still readable, not asserted");
      else t.equal((await runToExit([...artifact.command, "--error-pages-dir", locked])).code, 2);
    });
  });
}
