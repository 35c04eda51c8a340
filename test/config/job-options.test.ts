// The options of CONTRACT §17 through the real command line: defaults, env variables, and every usage error as one line with exit code 2.
import t from "tap";
import { configOf as config, runCommandLine as run } from "../helpers/command-line.js";

const APP = ["--", "app", "serve"];
const ISTIO = "http://127.0.0.1:15020/quitquitquit";
const LINKERD = "http://localhost:4191/shutdown";

t.test("defaults: off", async (t) => {
  const defaults = config(APP);
  t.equal(defaults.exitZeroOnStop, false);
  t.same(defaults.appExitNotify, []);
  t.equal(defaults.appHealthPath, undefined);
  t.equal(defaults.upstreamConnectRetryMs, 0);
});

t.test("--upstream-connect-retry, from the flag and the env", async (t) => {
  t.equal(config(["--upstream-connect-retry", "10s"]).upstreamConnectRetryMs, 10_000);
  t.equal(config([], { READINESS_PROXY_UPSTREAM_CONNECT_RETRY: "1m30s" }).upstreamConnectRetryMs, 90_000);
});

t.test("--app-health-path, from the flag and the env", async (t) => {
  t.equal(config(["--app-health-path", "/livez"]).appHealthPath, "/livez");
  t.equal(config([], { READINESS_PROXY_APP_HEALTH_PATH: "/healthz?deep=1" }).appHealthPath, "/healthz?deep=1");
});

t.test("--exit-zero-on-stop and --app-exit-notify, from flags and from env", async (t) => {
  const fromFlags = config(["--exit-zero-on-stop", "--app-exit-notify", ISTIO, `--app-exit-notify=${LINKERD}`, "--app-exit-notify", "http://[::1]:9/x", ...APP]);
  t.equal(fromFlags.exitZeroOnStop, true);
  t.same(fromFlags.appExitNotify, [ISTIO, LINKERD, "http://[::1]:9/x"], "in the order given");
  const fromEnv = config(APP, { READINESS_PROXY_EXIT_ZERO_ON_STOP: "1", READINESS_PROXY_APP_EXIT_NOTIFY: `${ISTIO}, ${LINKERD}` });
  t.equal(fromEnv.exitZeroOnStop, true);
  t.same(fromEnv.appExitNotify, [ISTIO, LINKERD]);
  t.equal(config(APP, { READINESS_PROXY_EXIT_ZERO_ON_STOP: "false" }).exitZeroOnStop, false);
  t.same(config(["--app-exit-notify", LINKERD, ...APP], { READINESS_PROXY_APP_EXIT_NOTIFY: ISTIO }).appExitNotify, [LINKERD], "the flag over the env");
  t.same(config(Array.from({ length: 8 }, (_, index) => `--app-exit-notify=http://127.0.0.1:${index + 1}/`).concat(APP)).appExitNotify.length, 8, "8 at most");
});

t.test("usage errors: one line naming the flag and the value, exit 2", async (t) => {
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--exit-zero-on-stop"], {}, "error: --exit-zero-on-stop: expected only in the entrypoint form (with -- <command>)\n"],
    [[], { READINESS_PROXY_EXIT_ZERO_ON_STOP: "true" }, "error: READINESS_PROXY_EXIT_ZERO_ON_STOP: expected only in the entrypoint form (with -- <command>)\n"],
    [[], { READINESS_PROXY_EXIT_ZERO_ON_STOP: "yes" }, 'error: READINESS_PROXY_EXIT_ZERO_ON_STOP: expected 1, true, 0 or false, got "yes"\n'],
    [["--app-exit-notify", ISTIO], {}, `error: --app-exit-notify: expected only in the entrypoint form (with -- <command>), got "${ISTIO}"\n`],
    [["--app-exit-notify", "http://10.1.2.3:15020/quitquitquit", ...APP], {}, 'error: --app-exit-notify: expected a loopback host (127.0.0.0/8, [::1] or localhost), got "http://10.1.2.3:15020/quitquitquit"\n'],
    [["--app-exit-notify", "https://127.0.0.1:15020/quitquitquit", ...APP], {}, 'error: --app-exit-notify: expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit, got "https://127.0.0.1:15020/quitquitquit"\n'],
    [["--app-exit-notify", "/quitquitquit", ...APP], {}, 'error: --app-exit-notify: expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit, got "/quitquitquit"\n'],
    [APP, { READINESS_PROXY_APP_EXIT_NOTIFY: "http://example.com/x" }, 'error: READINESS_PROXY_APP_EXIT_NOTIFY: expected a loopback host (127.0.0.0/8, [::1] or localhost), got "http://example.com/x"\n'],
    [["--upstream-connect-retry", "10"], {}, 'error: --upstream-connect-retry: expected a duration like 500ms, 1s or 1m30s, got "10"\n'],
    [[], { READINESS_PROXY_UPSTREAM_CONNECT_RETRY: "soon" }, 'error: READINESS_PROXY_UPSTREAM_CONNECT_RETRY: expected a duration like 500ms, 1s or 1m30s, got "soon"\n'],
    [["--app-health-path", "livez"], {}, 'error: --app-health-path: expected a path starting with / without spaces or control characters, got "livez"\n'],
    [[], { READINESS_PROXY_APP_HEALTH_PATH: "/a b" }, 'error: READINESS_PROXY_APP_HEALTH_PATH: expected a path starting with / without spaces or control characters, got "/a b"\n'],
    [[...Array.from({ length: 9 }, (_, index) => `--app-exit-notify=http://127.0.0.1:${index + 1}/`), ...APP], {}, 'error: --app-exit-notify: expected at most 8 URLs, got "9 URLs"\n'],
  ];
  for (const [argv, env, line] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, `${argv.join(" ")} ${JSON.stringify(env)}`);
    t.equal(err, line);
  }
});

t.test("--help: --admin-listen names every admin route, the Job ones too", async (t) => {
  const help = run(["--help"]).out.replace(/\s+/g, " ");
  const entry = /--admin-listen <host:port> (.*?)\(env: READINESS_PROXY_ADMIN_LISTEN\)/.exec(help)?.[1] ?? "";
  for (const route of ["POST /drain", "POST /quitquitquit", "POST|DELETE /maintenance", "PUT /log-level", "GET /status"]) t.match(entry, route, `names ${route}`);
  t.match(help, "readiness-proxy stop", "the stop command is listed");
  t.match(help, "readiness-proxy log-level", "and log-level");
});
