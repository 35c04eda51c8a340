// The entrypoint form in an image built from docs/deploy/app-entrypoint.Dockerfile, and every Pod or Deployment of docs/deploy/ under podman kube play.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import type { LogRecord } from "../helpers/log-capture.js";
import { send } from "../helpers/http-client.js";
import { hasPython, holdPort } from "../helpers/port-holder.js";
import { runToExit } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { APP_FILE, buildAppImages, busyboxHttpd } from "./app-images.js";
import { playable, workloadManifests, type Probe } from "./kube-manifests.js";
import { kubeProbeBinary } from "../helpers/kube-probe.js";
import { grpcioMissing, startGrpcApp } from "../helpers/grpc-app.js";
import { messages, podmanUnavailable, startPodman, waitFor, type Podman } from "./podman.js";

const unavailable = podmanUnavailable({ kubePlay: true, busybox: true });
// Podman on vfs storage is slow on a busy 2-core machine (app-image.test.ts took 116 s there, near
// .taprc's 120 s); every wait inside is bounded on its own.
t.setTimeout(300_000);
if (unavailable) t.comment(`skipping the app image tests: ${unavailable}`);

/** Where each message first appears in the log; -1 when it never does. */
const positions = (records: readonly LogRecord[], wanted: readonly string[]) => wanted.map((msg) => messages(records).indexOf(msg));

/** Uid line and effective capabilities of a container's PID 1, from the host's /proc. */
async function credentials(podman: Podman, container: string) {
  const pid = Number(await podman.must(["inspect", "--format", "{{.State.Pid}}", container]));
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]), capEff: /^CapEff:\s+(\w+)$/m.exec(status)?.[1] };
}

t.test("app images built on ours", { skip: unavailable }, async (t) => {
  const podman = startPodman(t);
  const images = await buildAppImages(t, podman);

  t.test("app-entrypoint.Dockerfile: tini, then readiness-proxy, which starts the app; at stop the drain comes before the app's exit", async (t) => {
    const config = JSON.parse(await podman.must(["inspect", "--format", "{{json .Config}}", images.appEntrypoint])) as { User: string; Entrypoint: string[]; Cmd: string[] };
    t.same(config.Entrypoint, ["tini", "--", "readiness-proxy"], "found on PATH in /usr/local/bin");
    t.equal(config.User, "65532");
    t.same(config.Cmd.slice(0, 2), ["--upstream=http://127.0.0.1:8000", "--"], "CMD: the proxy's flags, then the app");
    const [port, appPort] = [await closedPort(), await closedPort()];
    const cmd = [`--listen=127.0.0.1:${port}`, `--upstream=http://127.0.0.1:${appPort}`, "--shutdown-delay=2s", "--", ...busyboxHttpd(`127.0.0.1:${appPort}`)];
    const id = await podman.must(["run", "--detach", "--network", "host", "--read-only", "--cap-drop", "ALL", images.appEntrypoint, ...cmd]);
    await waitFor("/health through the derived image", 20_000, async () => ((await send(port, "/health")).status === 200 ? true : undefined));
    const file = await waitFor("the app's file through the proxy", 10_000, async () => {
      const reply = await send(port, APP_FILE.path);
      return reply.status === 200 ? reply.text() : undefined;
    });
    t.equal(file, APP_FILE.text, "a GET through the proxy returns busybox httpd's file");
    t.same(await credentials(podman, id), { uid: 65532, capEff: "0000000000000000" });
    const stopped = podman.run(["stop", "--time", "20", id]);
    await waitFor("/readyz draining", 5_000, async () => ((await send(port, "/readyz")).status === 503 ? true : undefined));
    t.equal((await send(port, APP_FILE.path)).text(), APP_FILE.text, "the app still serves during the drain");
    t.equal((await stopped).code, 0);
    t.equal(await podman.exitCode(id), 143, "the app's exit: busybox httpd ended by SIGTERM (128 + 15)");
    const { records } = await podman.logs(id);
    t.match(records.find((record) => record.msg === "app started"), { command: busyboxHttpd(`127.0.0.1:${appPort}`) });
    const order = positions(records, ["draining", "stopping app", "app exited", "stopped"]);
    t.ok(order.every((index, i) => index >= 0 && (i === 0 || index > order[i - 1]!)), `draining < stopping app < app exited < stopped: ${order.join(" < ")}`);
    t.match(records.find((record) => record.msg === "app exited"), { signal: "SIGTERM" });
  });

  for (const file of workloadManifests()) {
    t.test(`docs/deploy/${file} under podman kube play --network host`, async (t) => {
      const manifest = playable(file, images);
      for (const change of manifest.changes) t.comment(`changed for podman here: ${change}`);
      // A network namespace of its own, so that the manifest's fixed ports (8080, 8000, 15008) are its alone.
      const namespace = `rp-kube-${process.pid}-${file.replace(/\W/g, "").slice(0, 20)}`;
      t.equal(spawnSync("ip", ["netns", "add", namespace]).status, 0, "netns created");
      t.teardown(() => void spawnSync("ip", ["netns", "del", namespace]));
      spawnSync("ip", ["-n", namespace, "link", "set", "lo", "up"]);
      const inside = ["ip", "netns", "exec", namespace];
      const podmanInside = { wrapper: ["nsenter", `--net=/run/netns/${namespace}`] };
      // A grpc probe is asked the kubelet's way: the grpc-go prober of test/grpc, inside the pod's netns.
      const prober = kubeProbeBinary();
      const passes = async (probe: Probe) => {
        if (!probe.grpc) return (await get(probe.httpGet!.path)).status === 200;
        if ("missing" in prober) throw new Error(`a grpc probe cannot be asked here: ${prober.missing}`);
        return (await runToExit([...inside, prober.path, "-addr", `127.0.0.1:${probe.grpc.port}`, "-service", probe.grpc.service ?? ""])).code === 0;
      };
      const describe = (probe: Probe) => (probe.grpc ? `grpc ${JSON.stringify(probe.grpc.service ?? "")}` : probe.httpGet!.path);
      const get = async (path: string) => {
        const script = `fetch("http://127.0.0.1:${manifest.listenPort}${path}").then(async (r) => console.log(JSON.stringify([r.status, await r.text()])), () => console.log("[0,\\"\\"]"))`;
        const [status, text] = JSON.parse((await runToExit([...inside, process.execPath, "-e", script])).stdout) as [number, string];
        return { status, text };
      };

      const dir = mkdtempSync(join(tmpdir(), "rp-kube-"));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const yamlFile = join(dir, file);
      writeFileSync(yamlFile, manifest.yaml);
      const played = await podman.must(["kube", "play", "--network", "host", yamlFile], podmanInside);
      const podName = await podman.must(["pod", "inspect", "--format", "{{.Name}}", /^Pod:\n(\w+)/m.exec(played)?.[1] ?? "none"]);
      const proxyContainer = `${podName}-${manifest.proxy.name}`;
      t.teardown(() => podman.run(["kube", "down", yamlFile], podmanInside).then(() => undefined));

      const health = await waitFor("/health in the pod", 30_000, async () => {
        const reply = await get("/health");
        return reply.status === 200 ? reply : undefined;
      });
      t.equal(health.text, '{"status":"ok"}', "the proxy serves /health");
      // podman runs no probe (no systemd here): each probe's path is asked here, on the proxy's port.
      // A startup probe on one listener check (the sidecar form's /readyz/listener-15008: the app
      // starts once the mesh listens) fails until that port listens: asked again once it does.
      const startupProbe = manifest.proxy.startupProbe;
      const startupWaitsForPort = startupProbe?.httpGet?.path.startsWith("/readyz/listener-") === true;
      for (const kind of ["startupProbe", "livenessProbe"] as const) {
        const probe = manifest.proxy[kind];
        if (probe) t.equal(await passes(probe), !(kind === "startupProbe" && startupWaitsForPort), `${kind}: ${describe(probe)}`);
      }
      // A gRPC manifest's app is played by the test below (its health); the others' is busybox httpd.
      if (manifest.upstreamGrpcService === undefined) {
        const app = await waitFor("the app's file through the proxy", 10_000, async () => {
          const reply = await get(APP_FILE.path);
          return reply.status === 200 ? reply.text : undefined;
        });
        t.equal(app, APP_FILE.text, "proxied to the app");
      }
      const readinessProbe = manifest.proxy.readinessProbe!;
      const readiness = describe(readinessProbe);
      const readyzPath = readinessProbe.httpGet?.path ?? "/readyz";
      // In the entrypoint form the app's own port is required too: a result cached before busybox listened may still name it.
      // A port the manifest requires that busybox listens on (the sidecar form's app port) is not missing.
      const missing = manifest.requiredPorts.filter((port) => port !== manifest.upstreamPort);
      const notReady = await waitFor("/readyz missing only the required ports", 5_000, async () => {
        const reply = await get(readyzPath);
        return reply.status === 503 && JSON.stringify((JSON.parse(reply.text) as { missingListeners?: number[] }).missingListeners) === JSON.stringify(missing) ? reply : undefined;
      });
      if (readinessProbe.grpc) t.notOk(await passes(readinessProbe), `readinessProbe ${readiness}: NOT_SERVING while ${missing.join(", ")} do not listen`);
      t.equal(notReady.status, 503, `readinessProbe ${readiness}: 503 while ${missing.join(", ")} do not listen`);
      t.match(JSON.parse(notReady.text), { missingListeners: missing });
      if (hasPython()) {
        for (const port of missing) await (await holdPort(t, { family: 6, port, wrapper: inside })).listen();
        // A result cached (up to the 1 s TTL) from just before the listen may still be the failing one: asked again until the next run.
        if (startupProbe && startupWaitsForPort) {
          const passed = await waitFor(`startupProbe ${describe(startupProbe)} passing`, 5_000, async () => ((await passes(startupProbe)) ? true : undefined)).catch(() => false);
          t.ok(passed, `startupProbe ${describe(startupProbe)}: passes once the port listens`);
        }
        if (manifest.upstreamGrpcService !== undefined) {
          // The app's own gRPC health is a check: busybox httpd has none, so every port listening is not enough.
          const upstreamOnly = await waitFor("/readyz failing on the upstream check alone", 10_000, async () => {
            const reply = await get("/readyz");
            return reply.status === 503 && JSON.stringify((JSON.parse(reply.text) as { failedChecks?: string[] }).failedChecks) === '["upstream"]' ? reply : undefined;
          });
          t.equal(upstreamOnly.status, 503, `/readyz 503 on the upstream check alone once ${missing.join(", ")} listen: the app does not answer yet`);
          t.notOk(await passes(readinessProbe), `readinessProbe ${readiness}: NOT_SERVING while the app does not answer`);
          if (grpcioMissing() === undefined) {
            // The app: a grpcio server in the pod's network namespace on the --upstream port, NOT_SERVING first.
            const app = await startGrpcApp(t, manifest.upstreamPort, { initialHealth: "NOT_SERVING", wrapper: inside });
            // Checks run when asked (the probes ask): each /readyz here is such an ask.
            const stillOut = await waitFor("the app's NOT_SERVING as the upstream check's reason", 10_000, async () => {
              const reply = await get("/readyz/upstream");
              return reply.text.trim() === "upstream failed: status NOT_SERVING" ? reply : undefined;
            });
            t.equal(stillOut.status, 503, "the app answers NOT_SERVING: still out");
            t.ok(app.calls.some((call) => call === `check ${manifest.upstreamGrpcService}`), "asked by the proxy's upstream check");
            t.notOk(await passes(readinessProbe), `readinessProbe ${readiness}: NOT_SERVING while the app's own health says NOT_SERVING`);
            await app.set(manifest.upstreamGrpcService, "SERVING");
            await waitFor("readiness once the app's health says SERVING", 10_000, async () => ((await passes(readinessProbe)) ? true : undefined));
            t.pass(`readinessProbe ${readiness}: SERVING once the app's own grpc.health.v1 says SERVING`);
          } else {
            t.comment(`not checked: the app turning SERVING (${grpcioMissing()})`);
          }
        } else {
          await waitFor("readiness once the required ports listen", 10_000, async () => ((await passes(readinessProbe)) ? true : undefined));
          t.pass(`readinessProbe ${readiness}: 200 once ${missing.join(", ")} listen in the pod's network namespace`);
        }
      } else {
        t.comment("not checked: /readyz turning 200 (needs python3 to open the required ports)");
      }

      // podman ignores runAsNonRoot: the uid is checked here, with the capabilities and the read-only root.
      const security = manifest.proxy.securityContext ?? {};
      const { uid, capEff } = await credentials(podman, proxyContainer);
      t.not(uid, 0, `runs as uid ${uid}, not root`);
      if (security.capabilities?.drop?.includes("ALL")) t.equal(capEff, "0000000000000000", "no capability");
      if (security.readOnlyRootFilesystem) t.equal(await podman.must(["inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", proxyContainer]), "true");

      // The kubelet's stop: SIGTERM, then the grace period. (podman 4.3's kube down sends SIGKILL at once, podman#22397.)
      const stop = await podman.run(["pod", "stop", "--time", String(manifest.terminationGracePeriodSeconds), podName], { timeoutMs: (manifest.terminationGracePeriodSeconds + 15) * 1000 });
      t.equal(stop.code, 0, "pod stopped");
      const { records } = await podman.logs(proxyContainer);
      const wanted = manifest.form === "entrypoint" ? ["draining", "stopping app", "app exited", "stopped"] : ["draining", "stopped"];
      const order = positions(records, wanted);
      t.ok(order.every((index, i) => index >= 0 && (i === 0 || index > order[i - 1]!)), `${wanted.join(" < ")}: ${order.join(" < ")}`);
      t.match(records.find((record) => record.msg === "draining"), { reason: "SIGTERM" });
      t.equal(await podman.exitCode(proxyContainer), manifest.form === "entrypoint" ? 143 : 0, manifest.form === "entrypoint" ? "the app's exit (SIGTERM)" : "exit 0");
      const down = await podman.run(["kube", "down", yamlFile], podmanInside);
      t.equal(down.code, 0, "podman kube down");
      t.not((await podman.run(["pod", "exists", podName])).code, 0, "the pod is gone");
    });
  }
});
