// The options of CONTRACT §14 through the real command line: defaults, env variables, signal forms, and every usage error as one line with exit code 2.
import t from "tap";
import { configOf as config, runCommandLine as run } from "../helpers/command-line.js";

const APP = ["--", "app", "serve"];

t.test("defaults: no start wait, no admin listener, the stop signal follows ours", async (t) => {
  const defaults = config([]);
  t.equal(defaults.appStartWaitMs, 0);
  t.equal(defaults.appStartWaitFatal, false);
  t.equal(defaults.appStopSignal, undefined);
  t.equal(defaults.adminListen, undefined);
});

t.test("--app-start-wait and its switch, from flags and from env", async (t) => {
  const fromFlags = config(["--readiness-required-listener", "15008", "--app-start-wait", "30s", "--app-start-wait-fatal", ...APP]);
  t.equal(fromFlags.appStartWaitMs, 30_000);
  t.equal(fromFlags.appStartWaitFatal, true);
  const fromEnv = config(APP, { READINESS_PROXY_REQUIRED_LISTENERS: "15008", READINESS_PROXY_APP_START_WAIT: "1m", READINESS_PROXY_APP_START_WAIT_FATAL: "true" });
  t.equal(fromEnv.appStartWaitMs, 60_000);
  t.equal(fromEnv.appStartWaitFatal, true);
  t.equal(config(["--app-start-wait", "0s"]).appStartWaitMs, 0, "0s: start at once, allowed anywhere");
});

t.test("--app-stop-signal: TERM and SIGTERM forms, any case; env", async (t) => {
  for (const [text, signal] of [
    ["SIGQUIT", "SIGQUIT"],
    ["QUIT", "SIGQUIT"],
    ["quit", "SIGQUIT"],
    ["TERM", "SIGTERM"],
    ["SIGINT", "SIGINT"],
    ["HUP", "SIGHUP"],
    ["USR1", "SIGUSR1"],
    ["SIGUSR2", "SIGUSR2"],
    ["WINCH", "SIGWINCH"],
  ] as const) {
    t.equal(config(["--app-stop-signal", text, ...APP]).appStopSignal, signal, text);
  }
  t.equal(config(APP, { READINESS_PROXY_APP_STOP_SIGNAL: "QUIT" }).appStopSignal, "SIGQUIT");
});

t.test("--admin-listen: loopback only", async (t) => {
  for (const [text, host] of [
    ["127.0.0.1:9901", "127.0.0.1"],
    ["127.1.2.3:9901", "127.1.2.3"],
    ["localhost:9901", "localhost"],
    ["[::1]:9901", "::1"],
  ] as const) {
    t.same(config(["--admin-listen", text]).adminListen, { host, port: 9901 }, text);
  }
  t.same(config([], { READINESS_PROXY_ADMIN_LISTEN: "127.0.0.1:9901" }).adminListen, { host: "127.0.0.1", port: 9901 });
});

t.test("usage errors: one line naming the flag and the value, exit 2", async (t) => {
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--readiness-required-listener", "15008", "--app-start-wait", "30s"], {}, 'error: --app-start-wait: expected only in the entrypoint form (with -- <command>), got "30s"\n'],
    [["--app-start-wait", "30s", ...APP], {}, 'error: --app-start-wait: expected with at least one --readiness-required-listener to wait for, got "30s"\n'],
    [["--readiness-required-listener", "15008", "--app-start-wait", "30", ...APP], {}, 'error: --app-start-wait: expected a duration like 500ms, 1s or 1m30s, got "30"\n'],
    [["--app-start-wait-fatal", ...APP], {}, "error: --app-start-wait-fatal: expected only with --app-start-wait above 0s\n"],
    [["--app-stop-signal", "KILL", ...APP], {}, 'error: --app-stop-signal: expected one of SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, got "KILL"\n'],
    [["--app-stop-signal", "SIGSTOP", ...APP], {}, 'error: --app-stop-signal: expected one of SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, got "SIGSTOP"\n'],
    [["--admin-listen", "0.0.0.0:9901"], {}, 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "0.0.0.0:9901"\n'],
    [["--admin-listen", ":9901"], {}, 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got ":9901"\n'],
    [["--admin-listen", "10.1.2.3:9901"], {}, 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "10.1.2.3:9901"\n'],
    [["--admin-listen", "[::]:9901"], {}, 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "[::]:9901"\n'],
    [["--admin-listen", "128.0.0.1:9901"], {}, 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "128.0.0.1:9901"\n'],
    [["--admin-listen", "127.0.0.1"], {}, 'error: --admin-listen: expected host:port, like 127.0.0.1:9901, got "127.0.0.1"\n'],
    [[], { READINESS_PROXY_ADMIN_LISTEN: "0.0.0.0:9901" }, 'error: READINESS_PROXY_ADMIN_LISTEN: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "0.0.0.0:9901"\n'],
  ];
  for (const [argv, env, line] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, argv.join(" "));
    t.equal(err, line);
  }
});
