// Environment mistakes against the built program: an unknown READINESS_PROXY_ variable is a warn line in the JSON log (service links are not), a bad value names its variable, an empty one is unset.
import t from "tap";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: the environment`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    t.test("an unknown variable: one warn line through the log, naming it and the closest known name", async (t) => {
      const env = {
        PATH: process.env.PATH,
        READINESS_PROXY_REQUIRED_LISTENER: "15008",
        // A Service named readiness-proxy in the namespace: the kubelet's service links, never a warning.
        READINESS_PROXY_SERVICE_HOST: "10.96.0.12",
        READINESS_PROXY_SERVICE_PORT: "8080",
        READINESS_PROXY_PORT: "tcp://10.96.0.12:8080",
        READINESS_PROXY_PORT_8080_TCP: "tcp://10.96.0.12:8080",
        READINESS_PROXY_PORT_8080_TCP_ADDR: "10.96.0.12",
        // A blank value, as Helm renders one: unset, so this start has no upstream check.
        READINESS_PROXY_UPSTREAM_PATH: "",
      };
      const daemon = await spawnDaemon(t, artifact.command, [], { env });
      const warnings = daemon.records.filter((record) => record.msg === "unknown environment variable ignored");
      t.match(warnings, [{ level: 40, variable: "READINESS_PROXY_REQUIRED_LISTENER", didYouMean: "READINESS_PROXY_REQUIRED_LISTENERS" }]);
      t.equal(warnings.length, 1, "service links are not warned about");
      t.match(daemon.records.find((record) => record.msg === "listening"), { requiredListeners: [], upstreamHealthPath: undefined });
      t.equal(daemon.stderr(), "", "nothing printed raw");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
    });

    t.test("a bad value names the variable it came from, and an empty one never fails a start", async (t) => {
      const delay = await runToExit([...artifact.command, "--listen", "127.0.0.1:0"], { PATH: process.env.PATH, READINESS_PROXY_SHUTDOWN_DELAY: "5" });
      t.equal(delay.code, 2);
      t.equal(delay.stderr, 'error: READINESS_PROXY_SHUTDOWN_DELAY: expected a duration like 500ms, 1s or 1m30s, got "5"\n');
      const own = await runToExit([...artifact.command], { PATH: process.env.PATH, READINESS_PROXY_REQUIRED_LISTENERS: "8080" });
      t.equal(own.code, 2);
      t.equal(own.stderr, 'error: READINESS_PROXY_REQUIRED_LISTENERS: expected a port other than --listen\'s own (the proxy listens there, so it would always pass), got "8080"\n');
    });

    t.test("a --proc-root that does not exist at start is a typo: exit 2, one line naming the flag (or variable) and the value", async (t) => {
      const flag = await runToExit([...artifact.command, "--listen", "127.0.0.1:0", "--proc-root", "/nonexistent", "--readiness-required-listener", "9000"], { PATH: process.env.PATH });
      t.equal(flag.code, 2);
      t.equal(flag.stderr, 'error: --proc-root: expected an existing directory (ENOENT), got "/nonexistent"\n');
      t.equal(flag.stdout, "", "never started, so never said ready");
      const variable = await runToExit([...artifact.command, "--listen", "127.0.0.1:0"], { PATH: process.env.PATH, READINESS_PROXY_PROC_ROOT: "/etc/hostname" });
      t.equal(variable.code, 2);
      t.equal(variable.stderr, 'error: READINESS_PROXY_PROC_ROOT: expected an existing directory (not a directory), got "/etc/hostname"\n');
    });
  });
}
