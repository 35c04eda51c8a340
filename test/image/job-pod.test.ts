// docs/kubernetes.md's Jobs (Istio, Linkerd) under podman kube play: the app ends on its own, --app-exit-notify reaches a stand-in mesh agent that then exits, and the pod completes with the app's code.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { parse } from "yaml";
import { runToExit } from "../helpers/spawn-daemon.js";
import { APP_FILE, buildAppImages, busyboxHttpd } from "./app-images.js";
import { AGENT_SEEN, docsJobs, playableJob, type PlayableJob } from "./job-manifests.js";
import { messages, podmanUnavailable, startPodman, waitFor } from "./podman.js";

const unavailable = podmanUnavailable({ kubePlay: true, busybox: true });
// Podman on vfs storage is slow on a busy 2-core machine; every wait inside is bounded on its own.
t.setTimeout(300_000);
if (unavailable) t.comment(`skipping the Job pod tests: ${unavailable}`);

t.test("docs/kubernetes.md has a Job for Istio and one for Linkerd", async (t) => {
  const jobs = docsJobs();
  const notify = jobs.map((job) => job.spec.template.spec.containers[0].args.find((arg: string) => arg.startsWith("--app-exit-notify=")));
  t.same(notify, ["--app-exit-notify=http://127.0.0.1:15020/quitquitquit", "--app-exit-notify=http://127.0.0.1:4191/shutdown"]);
  for (const job of jobs) {
    const container = job.spec.template.spec.containers[0];
    const port = new URL(container.args.find((arg: string) => arg.startsWith("--app-exit-notify=")).slice("--app-exit-notify=".length)).port;
    t.ok(container.args.includes(`--readiness-required-listener=${port}`) && container.args.some((arg: string) => arg.startsWith("--app-start-wait=")), `the app starts once ${port} listens`);
    t.ok(container.args.includes("--exit-zero-on-stop"));
    t.same(container.livenessProbe.httpGet, { path: "/app-health", port: "http" }, "liveness on /app-health");
    t.ok(container.args.some((arg: string) => arg.startsWith("--app-health-path=")), "with the app's health path");
    t.equal(job.spec.template.spec.restartPolicy, "Never");
  }
  // README's "Jobs and mesh sidecars" gives each Job's args and probe: the same as the Jobs here.
  const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Jobs and mesh sidecars\n"), readme.indexOf("\n## Image\n"));
  const snippets = [...section.matchAll(/^( *)```yaml\n([\s\S]*?)\n *```/gm)].map((match) => parse(match[2]!.split("\n").map((line) => line.slice(match[1]!.length)).join("\n")) as { args: string[]; livenessProbe: unknown });
  t.same(
    snippets.map(({ args, livenessProbe }) => ({ args, livenessProbe })),
    jobs.map((job) => ({ args: job.spec.template.spec.containers[0].args, livenessProbe: { httpGet: job.spec.template.spec.containers[0].livenessProbe.httpGet } })),
    "README.md's Job args and liveness probe are docs/kubernetes.md's",
  );
});

/** The app of a Job that does its work (a line on stdout) and exits with `code` on its own. */
const reportThenExit = (code: number) => ["busybox", "sh", "-c", `echo "report written"; exit ${code}`];

t.test("a Job's pod under podman kube play completes", { skip: unavailable }, async (t) => {
  const podman = startPodman(t);
  const images = await buildAppImages(t, podman);
  const jobs = docsJobs();
  const [istio, linkerd] = [jobs[0]!, jobs[1]!];

  /** Plays `job` in a network namespace of its own (the agent's fixed port is this pod's alone); kube down at the end. */
  const play = async (t: Test, job: PlayableJob) => {
    for (const change of job.changes) t.comment(`changed for podman here: ${change}`);
    const namespace = `rp-job-${process.pid}-${job.name}`;
    t.equal(spawnSync("ip", ["netns", "add", namespace]).status, 0, "netns created");
    t.teardown(() => void spawnSync("ip", ["netns", "del", namespace]));
    spawnSync("ip", ["-n", namespace, "link", "set", "lo", "up"]);
    const inside = { wrapper: ["nsenter", `--net=/run/netns/${namespace}`] };
    const dir = mkdtempSync(join(tmpdir(), "rp-job-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const yamlFile = join(dir, `${job.name}.yaml`);
    writeFileSync(yamlFile, job.yaml);
    const played = await podman.must(["kube", "play", "--network", "host", yamlFile], inside);
    t.teardown(() => podman.run(["kube", "down", yamlFile], inside).then(() => undefined));
    return /^Pod:\n(\w+)/m.exec(played)?.[1] ?? "none";
  };

  /** Both containers exited (asked until then, bounded), the pod with them; the logs on failure. */
  const completes = async (t: Test, job: PlayableJob, podId: string) => {
    const containers = [job.appContainer, job.agentContainer];
    const states = await waitFor("both containers exited", 120_000, async () => {
      const state = await Promise.all(containers.map((name) => podman.must(["inspect", "--format", "{{.State.Status}}", name])));
      return state.every((status) => status === "exited") ? state : undefined;
    }).catch(async (error: Error) => {
      const logs = await Promise.all(containers.map((name) => podman.run(["logs", name])));
      throw new Error(`${error.message}\n${logs.map((log) => log.stdout + log.stderr).join("\n---\n")}`);
    });
    t.same(states, ["exited", "exited"]);
    for (const name of containers) t.equal(await podman.must(["inspect", "--format", "{{.RestartCount}}", name]), "0", `${name}: never restarted (restartPolicy Never)`);
    const pod = await waitFor("the pod's state once its containers exited", 30_000, async () => {
      const state = await podman.must(["pod", "inspect", "--format", "{{.State}}", podId]);
      return state === "Exited" ? state : undefined;
    });
    t.equal(pod, "Exited", "the pod completed: no container left running");
  };

  // Istio's Job succeeds (the app exits 0), Linkerd's fails (3): the pod completes either way, with the app's code.
  for (const [docsJob, code] of [
    [istio, 0],
    [linkerd, 3],
  ] as const) {
    const job = playableJob(docsJob, images, { name: `${docsJob === istio ? "istio" : "linkerd"}-exits-${code}`, work: reportThenExit(code) });
    t.test(`${job.mesh}: the app exits ${code} on its own, the agent is told and exits, the pod completes`, async (t) => {
      await completes(t, job, await play(t, job));
      t.equal(await podman.exitCode(job.appContainer), code, "the app's container exits with the app's own code");
      t.equal(await podman.exitCode(job.agentContainer), 0, "the agent exited on the notify");

      const { records } = await podman.logs(job.appContainer);
      const msgs = messages(records);
      t.match(records.find((record) => record.msg === "app exited"), { code });
      t.same(records.find((record) => record.msg === "app exit notified")?.notified, [{ url: job.notifyUrl.href, status: 200 }], "one POST, answered 200");
      const order = ["app started", "app exited", "app exit notified", "stopped"].map((msg) => msgs.indexOf(msg));
      t.ok(order.every((index, i) => index >= 0 && (i === 0 || index > order[i - 1]!)), `app started < app exited < app exit notified < stopped: ${order.join(" < ")}`);
      t.match((await podman.run(["logs", job.appContainer])).stdout, /^report written$/m, "the app did its work");

      const agentLog = await podman.run(["logs", job.agentContainer]);
      const seen = `${agentLog.stdout}${agentLog.stderr}`.split("\n").filter((line) => line.startsWith(AGENT_SEEN)).map((line) => line.slice(AGENT_SEEN.length + 1));
      t.equal(seen[0], `POST ${job.notifyUrl.pathname} HTTP/1.1`, "the agent got the POST at its shutdown path");
      t.ok(seen.some((line) => /^content-length: 0$/i.test(line)), `an empty body: ${seen.join(" | ")}`);
    });
  }

  // A Job ended from outside (activeDeadlineSeconds, a deletion): the kubelet's SIGTERM; the app dies of it (143).
  // The app serves (busybox httpd, not PID 1 here: tini is, so SIGTERM ends it) until then.
  const stopped = playableJob(istio, images, { name: "istio-stopped", work: busyboxHttpd("127.0.0.1:8000"), appHealthPath: APP_FILE.path });
  t.test("istio: the liveness probe's /app-health answered by the app; a Job stopped from outside: the app's SIGTERM (143) becomes exit 0 with --exit-zero-on-stop; the agent is not told", async (t) => {
    const podId = await play(t, stopped);
    await waitFor("the app started (past the start wait)", 60_000, async () => (messages((await podman.logs(stopped.appContainer)).records).includes("app started") ? true : undefined));
    // The kubelet's livenessProbe, asked from inside the pod's network namespace as it would be.
    const namespace = `rp-job-${process.pid}-${stopped.name}`;
    const script = `fetch("http://127.0.0.1:${stopped.listenPort}/app-health").then(async (r) => console.log(JSON.stringify([r.status, await r.text()])), () => console.log("[0,\\"\\"]"))`;
    const liveness = await waitFor("/app-health 200 once busybox httpd listens", 20_000, async () => {
      const [status, text] = JSON.parse((await runToExit(["ip", "netns", "exec", namespace, process.execPath, "-e", script])).stdout) as [number, string];
      return status === 200 ? text : undefined;
    });
    t.equal(liveness, APP_FILE.text, "livenessProbe /app-health: the app's own answer at its health path");
    // The agent (nc, PID 1 of its container) sets no SIGTERM handler: it goes at the stop's SIGKILL, 5 s on.
    const stop = await podman.run(["pod", "stop", "--time", "5", podId], { timeoutMs: 60_000 });
    t.equal(stop.code, 0, "pod stopped");
    await completes(t, stopped, podId);
    t.equal(await podman.exitCode(stopped.appContainer), 0, "exit 0, not the app's 143: the Job's pod succeeds");
    const { records } = await podman.logs(stopped.appContainer);
    t.match(records.find((record) => record.msg === "draining"), { reason: "SIGTERM" });
    t.match(records.find((record) => record.msg === "app exited"), { signal: "SIGTERM" }, "the app's own end stays in its line");
    t.notOk(messages(records).includes("app exit notified"), "an app we stopped is not notified for");
  });
});
