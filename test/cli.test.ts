// CLI tests through the real option registration: defaults, env variables, both flag spellings, every usage error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { describeConfig, parseCommandLine } from "../src/cli.js";
import type { Config } from "../src/config/config.js";
import { VERSION, versionLine } from "../src/version.js";

function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let out = "";
  let err = "";
  const result = parseCommandLine(argv, env, { writeOut: (text) => (out += text), writeErr: (text) => (err += text) });
  return { result, out, err };
}

function config(argv: string[], env: NodeJS.ProcessEnv = {}): Config {
  const { result, err } = run(argv, env);
  if (result.action !== "run") throw new Error(`refused: ${err}`);
  return result.config;
}

t.test("defaults", async (t) => {
  const defaults = config([]);
  t.same(defaults.listen, { host: undefined, port: 8080 });
  t.equal(defaults.upstream.origin, "http://127.0.0.1:8000");
  t.equal(defaults.upstream.pathPrefix, "");
  t.same(defaults.requiredPorts, []);
  t.equal(defaults.cacheTtlMs, 1000);
  t.equal(defaults.procRoot, "/proc");
  t.equal(defaults.responseHeaderTimeoutMs, 120_000);
  t.equal(defaults.shutdownDelayMs, 0);
  t.equal(defaults.shutdownTimeoutMs, 20_000, "fits the pod's 30 s grace period with the app's stop");
  t.same(defaults.appCommand, [], "the sidecar form");
  t.equal(defaults.appStopTimeoutMs, 5_000);
  t.equal(defaults.upstreamHealthPath, undefined);
  t.equal(defaults.upstreamHealthTimeoutMs, 1_000);
  t.equal(defaults.warnAfterMs, 60_000);
  t.equal(defaults.metricsListen, undefined);
  t.equal(defaults.logLevel, "info");
  t.equal(defaults.errorPagesDir, undefined);
  t.equal(defaults.interceptUpstreamErrors, false);
  t.equal(defaults.upstreamListener, "auto", "the entrypoint form requires the app's own loopback port");
});

t.test("--readiness-upstream-listener: auto or off, from the flag or the env", async (t) => {
  t.equal(config(["--readiness-upstream-listener", "off"]).upstreamListener, "off");
  t.equal(config(["--readiness-upstream-listener=auto"]).upstreamListener, "auto");
  t.equal(config([], { READINESS_PROXY_UPSTREAM_LISTENER: "off" }).upstreamListener, "off");
  t.equal(config(["--readiness-upstream-listener", "auto"], { READINESS_PROXY_UPSTREAM_LISTENER: "off" }).upstreamListener, "auto", "the flag over the env");
  t.same(config(["--", "app"]).requiredPorts, [], "the operator's ports only: the upstream's joins them in the daemon");
});

t.test("both spellings, repeated, sorted", async (t) => {
  t.same(config(["--readiness-required-listener", "15008", "--readiness-required-listener=9000"]).requiredPorts, [9000, 15008]);
  t.same(config(["--readiness-required-listener=1", "--readiness-required-listener", "65535"]).requiredPorts, [1, 65535]);
  t.same(config(Array.from({ length: 16 }, (_, index) => `--readiness-required-listener=${index + 1}`)).requiredPorts.length, 16);
  const kinds = config(["--readiness-required-listener", "unix:/run/php/fpm.sock", "--readiness-required-listener", "dns=udp:53", "--readiness-required-listener", "tcp:15008", "--readiness-required-listener", "unix:@app", "--readiness-required-listener", "mesh=15001", "--readiness-required-listener", "unix:/run/a=b.sock"]);
  t.same(
    kinds.requiredListeners.map((listener) => [listener.key, listener.name]),
    [[15001, "mesh"], [15008, "listener-15008"], ["udp:53", "dns"], ["unix:/run/php/fpm.sock", "listener-unix-fpm-sock"], ["unix:@app", "listener-unix--app"], ["unix:/run/a=b.sock", "listener-unix-a-b-sock"]],
    "every kind, named or not, in check order: TCP ascending, UDP ascending, unix as given; a path may hold =",
  );
  t.same(kinds.requiredPorts, [15001, 15008], "the TCP ports alone");
  t.same([config([]).failureThreshold, config([]).successThreshold], [1, 1], "thresholds default to 1: no damping");
  t.same([config(["--readiness-failure-threshold", "3"], { READINESS_PROXY_SUCCESS_THRESHOLD: "2" }).failureThreshold, config([], { READINESS_PROXY_SUCCESS_THRESHOLD: "2" }).successThreshold], [3, 2]);
  t.same(config(Array.from({ length: 16 }, (_, index) => (index % 2 ? `--readiness-required-listener=udp:${index + 1}` : `--readiness-required-listener=unix:/s${index}`))).requiredListeners.length, 16, "the 16 count every kind");
});

t.test("environment variables, and flags over them", async (t) => {
  const env = {
    READINESS_PROXY_LISTEN: "127.0.0.1:9000",
    READINESS_PROXY_UPSTREAM: "http://app:3000/api/",
    READINESS_PROXY_REQUIRED_LISTENERS: "15008, 8080",
    READINESS_PROXY_CACHE_TTL: "250ms",
    READINESS_PROXY_PROC_ROOT: "/dev",
    READINESS_PROXY_LOG_LEVEL: "debug",
  };
  const fromEnv = config([], env);
  t.same(fromEnv.listen, { host: "127.0.0.1", port: 9000 });
  t.equal(fromEnv.upstream.origin, "http://app:3000");
  t.equal(fromEnv.upstream.pathPrefix, "/api");
  t.same(fromEnv.requiredPorts, [8080, 15008]);
  t.equal(fromEnv.cacheTtlMs, 250);
  t.equal(fromEnv.procRoot, "/dev");
  t.equal(fromEnv.logLevel, "debug");
  const overridden = config(["--listen", ":7000", "--readiness-required-listener", "9"], env);
  t.same(overridden.listen, { host: undefined, port: 7000 });
  t.same(overridden.requiredPorts, [9], "flags replace the env list");
  t.same(config([], { READINESS_PROXY_REQUIRED_LISTENERS: "" }).requiredPorts, [], "empty env list");
});

t.test("accepted values", async (t) => {
  t.same(config(["--listen", "[::1]:8080"]).listen, { host: "::1", port: 8080 });
  t.same(config(["--listen", "[::]:80"]).listen, { host: "::", port: 80 });
  t.same(config(["--listen", "0.0.0.0:8080"]).listen, { host: "0.0.0.0", port: 8080 });
  t.same(config(["--listen", "localhost:0"]).listen, { host: "localhost", port: 0 });
  t.equal(config(["--readiness-cache-ttl", "1m30s"]).cacheTtlMs, 90_000);
  t.equal(config(["--readiness-cache-ttl", "1.5s"]).cacheTtlMs, 1500);
  // Go writes microseconds either way.
  t.equal(config(["--readiness-cache-ttl", "1500\u00b5s"]).cacheTtlMs, 1.5);
  t.equal(config(["--readiness-cache-ttl", "1500us"]).cacheTtlMs, 1.5);
  t.equal(config(["--shutdown-delay", "0"]).shutdownDelayMs, 0);
  t.equal(config(["--shutdown-timeout", "2h"]).shutdownTimeoutMs, 7_200_000);
  t.equal(config(["--upstream", "http://[::1]:8000"]).upstream.origin, "http://[::1]:8000");
  t.equal(config(["--error-pages-intercept-upstream"]).interceptUpstreamErrors, true);
});

t.test("usage errors: exit 2, one line naming the input and the value, no stack", async (t) => {
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--readiness-required-listener", "70000"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "70000"'],
    [["--readiness-required-listener=0"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "0"'],
    [["--readiness-required-listener", "-1"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "-1"'],
    [["--readiness-required-listener", "80.5"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "80.5"'],
    [["--readiness-required-listener", "http"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "http"'],
    [["--readiness-required-listener", ""], {}, 'error: --readiness-required-listener: expected a port 1..65535, got ""'],
    [["--readiness-required-listener", "15008", "--readiness-required-listener=15008"], {}, 'error: --readiness-required-listener: expected each port once, got "15008 twice"'],
    [Array.from({ length: 17 }, (_, index) => `--readiness-required-listener=${index + 1}`), {}, 'error: --readiness-required-listener: expected at most 16 ports, got "17 ports"'],
    [[], { READINESS_PROXY_REQUIRED_LISTENERS: "15008,x" }, 'error: READINESS_PROXY_REQUIRED_LISTENERS: expected a port 1..65535, got "x"'],
    [["--readiness-required-listener", "udp:0"], {}, 'error: --readiness-required-listener: expected a port 1..65535, got "udp:0"'],
    [["--upstream", "unix:run/app.sock"], {}, 'error: --upstream: expected unix:<absolute path> or unix://<absolute path>, got "unix:run/app.sock"'],
    [["--upstream", "unix://"], {}, 'error: --upstream: expected unix:<absolute path> or unix://<absolute path>, got "unix://"'],
    [["--readiness-failure-threshold", "0"], {}, 'error: --readiness-failure-threshold: expected an integer 1..100, got "0"'],
    [["--readiness-success-threshold", "101"], {}, 'error: --readiness-success-threshold: expected an integer 1..100, got "101"'],
    [[], { READINESS_PROXY_FAILURE_THRESHOLD: "3x" }, 'error: READINESS_PROXY_FAILURE_THRESHOLD: expected an integer 1..100, got "3x"'],
    [["--readiness-required-listener", "unix:run/app.sock"], {}, 'error: --readiness-required-listener: expected unix:<absolute path> or unix:@<abstract name>, got "unix:run/app.sock"'],
    [["--readiness-required-listener", "unix:"], {}, 'error: --readiness-required-listener: expected unix:<absolute path> or unix:@<abstract name>, got "unix:"'],
    [["--readiness-required-listener", "15008", "--readiness-required-listener", "tcp:15008"], {}, 'error: --readiness-required-listener: expected each port once, got "tcp:15008 twice"'],
    [["--readiness-required-listener", "udp:53", "--readiness-required-listener", "dns=udp:53"], {}, 'error: --readiness-required-listener: expected each listener once, got "dns=udp:53 twice"'],
    [["--readiness-required-listener", "unix:/a/fpm.sock", "--readiness-required-listener", "unix:/b/fpm.sock"], {}, 'error: --readiness-required-listener: expected each check name once, got "listener-unix-fpm-sock twice"'],
    [["--readiness-required-listener", "Mesh=15008"], {}, 'error: --readiness-required-listener: expected a check name of lowercase letters, digits and -, got "Mesh=15008"'],
    [["--readiness-required-listener", "upstream=15008"], {}, 'error: --readiness-required-listener: expected a name that is not a built-in check\'s, got "upstream=15008"'],
    [["--readiness-required-listener", "mesh=15008", "--readiness-required-http", "mesh=http://127.0.0.1:15021/ready"], {}, 'error: --readiness-required-http: expected a name not used by --readiness-required-listener, got "mesh"'],
    [[], { READINESS_PROXY_REQUIRED_LISTENERS: "udp:53,unix:x" }, 'error: READINESS_PROXY_REQUIRED_LISTENERS: expected unix:<absolute path> or unix:@<abstract name>, got "unix:x"'],
    [["--bogus"], {}, "error: unknown option '--bogus'"],
    [["extra"], {}, "error: too many arguments. Expected 0 arguments but got 1."],
    [["--readiness-required-listener"], {}, "error: option '--readiness-required-listener <port>' argument missing"],
    [["--upstream", "https://app:8000"], {}, 'error: --upstream: expected an absolute http:// URL (https upstreams are not supported), got "https://app:8000"'],
    [["--upstream", "app:8000"], {}, 'error: --upstream: expected an absolute http:// URL, got "app:8000"'],
    [["--upstream", "/relative"], {}, 'error: --upstream: expected an absolute http:// URL, got "/relative"'],
    [["--upstream", "http://app:8000/?x=1"], {}, 'error: --upstream: expected a URL without a query or fragment, got "http://app:8000/?x=1"'],
    [["--upstream", "http://u:p@app:8000"], {}, 'error: --upstream: expected a URL without credentials, got "http://u:p@app:8000"'],
    [["--readiness-cache-ttl", "5"], {}, 'error: --readiness-cache-ttl: expected a duration like 500ms, 1s or 1m30s, got "5"'],
    [["--shutdown-delay", "1 s"], {}, 'error: --shutdown-delay: expected a duration like 500ms, 1s or 1m30s, got "1 s"'],
    [["--shutdown-timeout", "-1s"], {}, 'error: --shutdown-timeout: expected a duration like 500ms, 1s or 1m30s, got "-1s"'],
    [["--response-header-timeout", "1d"], {}, 'error: --response-header-timeout: expected a duration like 500ms, 1s or 1m30s, got "1d"'],
    [["--response-header-timeout", "0s"], {}, 'error: --response-header-timeout: expected a duration above 0, got "0s"'],
    [[], { READINESS_PROXY_CACHE_TTL: "soon" }, 'error: READINESS_PROXY_CACHE_TTL: expected a duration like 500ms, 1s or 1m30s, got "soon"'],
    [["--listen", "8080"], {}, 'error: --listen: expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080, got "8080"'],
    [["--listen", "::1:8080"], {}, 'error: --listen: expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080, got "::1:8080"'],
    [["--listen", ":65536"], {}, 'error: --listen: expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080, got ":65536"'],
    [["--listen", "[::1]"], {}, 'error: --listen: expected [host]:port, like :8080, 127.0.0.1:8080 or [::1]:8080, got "[::1]"'],
    [["--log-level", "loud"], {}, 'error: --log-level: expected one of fatal, error, warn, info, debug, trace, got "loud"'],
    [["--"], {}, "error: --: expected the app's command after it, like -- python3 -m http.server 8000"],
    [["--app-stop-timeout", "5"], {}, 'error: --app-stop-timeout: expected a duration like 500ms, 1s or 1m30s, got "5"'],
    [["--readiness-upstream-path", "healthz"], {}, 'error: --readiness-upstream-path: expected a path starting with / without spaces or control characters, got "healthz"'],
    [["--readiness-upstream-path", "/a b"], {}, 'error: --readiness-upstream-path: expected a path starting with / without spaces or control characters, got "/a b"'],
    [["--readiness-upstream-path", "/a\u0001"], {}, 'error: --readiness-upstream-path: expected a path starting with / without spaces or control characters, got "/a\\u0001"'],
    [["--readiness-upstream-timeout", "0s"], {}, 'error: --readiness-upstream-timeout: expected a duration above 0, got "0s"'],
    [["--readiness-warn-after", "1 m"], {}, 'error: --readiness-warn-after: expected a duration like 500ms, 1s or 1m30s, got "1 m"'],
    [["--metrics-listen", "9090"], {}, 'error: --metrics-listen: expected [host]:port, like :9090 or 127.0.0.1:9090, got "9090"'],
    [["--metrics-listen", ":8080"], {}, 'error: --metrics-listen: expected an address other than --listen\'s, got ":8080"'],
    [["--listen", "127.0.0.1:9000", "--metrics-listen", ":9000"], {}, 'error: --metrics-listen: expected an address other than --listen\'s, got ":9000"'],
    [[], { READINESS_PROXY_METRICS_LISTEN: "nope" }, 'error: READINESS_PROXY_METRICS_LISTEN: expected [host]:port, like :9090 or 127.0.0.1:9090, got "nope"'],
    [["--readiness-upstream-listener", "on"], {}, 'error: --readiness-upstream-listener: expected auto or off, got "on"'],
    [["--readiness-upstream-listener=AUTO"], {}, 'error: --readiness-upstream-listener: expected auto or off, got "AUTO"'],
    [[], { READINESS_PROXY_UPSTREAM_LISTENER: "false" }, 'error: READINESS_PROXY_UPSTREAM_LISTENER: expected auto or off, got "false"'],
  ];
  for (const [argv, env, message] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, argv.join(" ") || JSON.stringify(env));
    t.equal(err.trimEnd(), message);
    t.notMatch(err, /\n.+\n/, "one line");
    t.notMatch(err, /\bat .*\.(ts|js):\d+/, "no stack trace");
  }
});

t.test("the entrypoint form: everything after the first -- is the app's, never ours", async (t) => {
  const entry = config(["--listen", ":9000", "--", "python3", "-m", "http.server", "--listen", "--", "8000"]);
  t.same(entry.listen, { host: undefined, port: 9000 });
  t.same(entry.appCommand, ["python3", "-m", "http.server", "--listen", "--", "8000"]);
  t.equal(config(["--app-stop-timeout", "30s", "--", "app"]).appStopTimeoutMs, 30_000);
  t.same(config(["--metrics-listen", "127.0.0.1:9090"]).metricsListen, { host: "127.0.0.1", port: 9090 });
  t.same(config(["--listen", "127.0.0.1:9000", "--metrics-listen", "[::1]:9000"]).metricsListen, { host: "::1", port: 9000 }, "same port, other host");
  t.equal(config(["--readiness-upstream-path", "/ready?full=1"]).upstreamHealthPath, "/ready?full=1");
  t.equal(config([], { READINESS_PROXY_UPSTREAM_PATH: "/healthz" }).upstreamHealthPath, "/healthz");
});

t.test("--version and --help exit 0", async (t) => {
  const version = run(["--version"]);
  t.same(version.result, { action: "exit", exitCode: 0 });
  t.equal(version.out, `${versionLine()}\n`);
  t.match(version.out, /^readiness-proxy \d+\.\d+\.\d+ \(node v\d+\.\d+\.\d+, linux-(x64|arm64)\)\n$/);
  const help = run(["--help"]);
  t.same(help.result, { action: "exit", exitCode: 0 });
  for (const expected of [
    "--listen",
    "READINESS_PROXY_LISTEN",
    '":8080"',
    "--upstream",
    "READINESS_PROXY_UPSTREAM",
    "--readiness-required-listener",
    "READINESS_PROXY_REQUIRED_LISTENERS",
    "--readiness-cache-ttl",
    "READINESS_PROXY_CACHE_TTL",
    "--proc-root",
    "READINESS_PROXY_PROC_ROOT",
    "--response-header-timeout",
    '"2m"',
    "--shutdown-delay",
    "--shutdown-timeout",
    '"20s"',
    "--app-stop-timeout",
    '"5s"',
    "--readiness-upstream-path",
    "READINESS_PROXY_UPSTREAM_PATH",
    "--readiness-upstream-timeout",
    "--readiness-warn-after",
    '"1m"',
    "--metrics-listen",
    "READINESS_PROXY_METRICS_LISTEN",
    "-- <command> [args...]",
    "--log-level",
    "READINESS_PROXY_LOG_LEVEL",
    "--error-pages-dir",
    "--error-pages-intercept-upstream",
  ]) {
    t.match(help.out.replace(/\s+/g, " "), expected, `help shows ${expected}`);
  }
});

t.test("VERSION matches package.json", async (t) => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")) as { version: string };
  t.equal(VERSION, pkg.version);
});

t.test("durations are shown back in Go's form", async (t) => {
  const { formatDuration } = await import("../src/config/duration.js");
  for (const [ms, text] of [[0, "0s"], [250, "250ms"], [1000, "1s"], [1500, "1.5s"], [25_300, "25.3s"], [60_000, "1m"], [90_000, "1m30s"], [90_500, "1m30.5s"]] as const) {
    t.equal(formatDuration(ms), text);
  }
});

t.test("overload protection and the access log: defaults, flags, env, flags over env (CONTRACT §10, §11)", async (t) => {
  const defaults = config([]);
  t.equal(defaults.maxConcurrency, 0, "no limit by default");
  t.equal(defaults.maxQueue, 0, "no queue without a limit");
  t.equal(defaults.queueTimeoutMs, 10_000);
  t.equal(defaults.accessLog, false);
  t.equal(config(["--max-concurrency", "4"]).maxQueue, 40, "the queue defaults to 10 × the limit");
  t.equal(config(["--max-concurrency=65535"]).maxQueue, 655_350);
  t.equal(config(["--max-concurrency", "0"]).maxConcurrency, 0, "0 says off explicitly");
  t.equal(config(["--max-concurrency", "4", "--max-queue", "0"]).maxQueue, 0, "0: refuse at once, never wait");
  t.equal(config(["--max-concurrency", "1", "--max-queue", "1000000"]).maxQueue, 1_000_000);
  t.equal(config(["--max-concurrency", "4", "--queue-timeout", "30s"]).queueTimeoutMs, 30_000);
  t.equal(config(["--max-concurrency", "4", "--queue-timeout", "1m30s"]).queueTimeoutMs, 90_000);
  t.equal(config(["--access-log"]).accessLog, true);
  const env = {
    READINESS_PROXY_MAX_CONCURRENCY: "8",
    READINESS_PROXY_MAX_QUEUE: "16",
    READINESS_PROXY_QUEUE_TIMEOUT: "2s",
    READINESS_PROXY_ACCESS_LOG: "true",
  };
  const fromEnv = config([], env);
  t.same([fromEnv.maxConcurrency, fromEnv.maxQueue, fromEnv.queueTimeoutMs, fromEnv.accessLog], [8, 16, 2_000, true]);
  const overridden = config(["--max-concurrency", "2", "--max-queue", "3", "--queue-timeout", "500ms"], env);
  t.same([overridden.maxConcurrency, overridden.maxQueue, overridden.queueTimeoutMs], [2, 3, 500], "flags over env");
  t.equal(config(["--max-concurrency", "2"], { READINESS_PROXY_MAX_CONCURRENCY: "8" }).maxQueue, 20, "the queue follows the flag's limit");
  for (const [value, on] of [["1", true], ["true", true], ["0", false], ["false", false]] as const) {
    t.equal(config([], { READINESS_PROXY_ACCESS_LOG: value }).accessLog, on, `READINESS_PROXY_ACCESS_LOG=${value}`);
  }
  t.equal(config(["--access-log"], { READINESS_PROXY_ACCESS_LOG: "0" }).accessLog, true, "the flag over env");
  t.equal(config(["--access-log"], { READINESS_PROXY_ACCESS_LOG: "yes" }).accessLog, true, "env not read when the flag is given");
});

t.test("overload and access-log usage errors: exit 2, one line naming the input and the value", async (t) => {
  const integer = (value: string) => `error: --max-concurrency: expected an integer 1..65535, got ${JSON.stringify(value)}`;
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--max-concurrency", "0x10"], {}, integer("0x10")],
    [["--max-concurrency", "65536"], {}, integer("65536")],
    [["--max-concurrency", "-1"], {}, integer("-1")],
    [["--max-concurrency", "1.5"], {}, integer("1.5")],
    [["--max-concurrency", "1e3"], {}, integer("1e3")],
    [["--max-concurrency", " 4"], {}, integer(" 4")],
    [["--max-concurrency", ""], {}, integer("")],
    [[], { READINESS_PROXY_MAX_CONCURRENCY: "four" }, integer("four").replace("--max-concurrency", "READINESS_PROXY_MAX_CONCURRENCY")],
    [["--max-concurrency", "4", "--max-queue", "1000001"], {}, 'error: --max-queue: expected an integer 0..1000000, got "1000001"'],
    [["--max-concurrency", "4", "--max-queue", "-5"], {}, 'error: --max-queue: expected an integer 0..1000000, got "-5"'],
    [["--max-concurrency", "4", "--max-queue", "ten"], {}, 'error: --max-queue: expected an integer 0..1000000, got "ten"'],
    [[], { READINESS_PROXY_MAX_CONCURRENCY: "4", READINESS_PROXY_MAX_QUEUE: "1.5" }, 'error: READINESS_PROXY_MAX_QUEUE: expected an integer 0..1000000, got "1.5"'],
    [[], { READINESS_PROXY_MAX_CONCURRENCY: "4", READINESS_PROXY_QUEUE_TIMEOUT: "soon" }, 'error: READINESS_PROXY_QUEUE_TIMEOUT: expected a duration like 500ms, 1s or 1m30s, got "soon"'],
    [["--max-queue", "10"], {}, 'error: --max-queue: only with --max-concurrency, got "10"'],
    [["--max-concurrency", "0", "--max-queue", "10"], {}, 'error: --max-queue: only with --max-concurrency, got "10"'],
    [["--queue-timeout", "5s"], {}, 'error: --queue-timeout: only with --max-concurrency, got "5s"'],
    [[], { READINESS_PROXY_MAX_QUEUE: "10" }, 'error: READINESS_PROXY_MAX_QUEUE: only with --max-concurrency, got "10"'],
    [[], { READINESS_PROXY_QUEUE_TIMEOUT: "10s" }, 'error: READINESS_PROXY_QUEUE_TIMEOUT: only with --max-concurrency, got "10s"'],
    [["--max-concurrency", "4", "--queue-timeout", "0s"], {}, 'error: --queue-timeout: expected a duration above 0, got "0s"'],
    [["--max-concurrency", "4", "--queue-timeout", "5"], {}, 'error: --queue-timeout: expected a duration like 500ms, 1s or 1m30s, got "5"'],
    [[], { READINESS_PROXY_ACCESS_LOG: "yes" }, 'error: READINESS_PROXY_ACCESS_LOG: expected 1, true, 0 or false, got "yes"'],
    [[], { READINESS_PROXY_ACCESS_LOG: "TRUE" }, 'error: READINESS_PROXY_ACCESS_LOG: expected 1, true, 0 or false, got "TRUE"'],
    [["--access-log", "1"], {}, "error: too many arguments. Expected 0 arguments but got 1."],
    [["--max-concurrency"], {}, "error: option '--max-concurrency <n>' argument missing"],
    [["--max-concurrency", "4", "--max-queue"], {}, "error: option '--max-queue <n>' argument missing"],
  ];
  for (const [argv, env, message] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, argv.join(" ") || JSON.stringify(env));
    t.equal(err.trimEnd(), message);
    t.notMatch(err, /\n.+\n/, "one line");
  }
});

t.test("the listening line shows the limiter's settings only when it is on, the access log only when on", async (t) => {
  const { describeConfig } = await import("../src/cli.js");
  const off = describeConfig(config([]));
  t.notOk("maxConcurrency" in off || "maxQueue" in off || "queueTimeout" in off || "accessLog" in off);
  t.match(describeConfig(config(["--max-concurrency", "4", "--queue-timeout", "30s", "--access-log"])), {
    maxConcurrency: 4,
    maxQueue: 40,
    queueTimeout: "30s",
    accessLog: true,
  });
});

t.test("--help lists the new options with their env variables", async (t) => {
  const help = run(["--help"]).out.replace(/\s+/g, " ");
  for (const expected of [
    "--max-concurrency <n>",
    "READINESS_PROXY_MAX_CONCURRENCY",
    "--max-queue <n>",
    "10 × --max-concurrency",
    "READINESS_PROXY_MAX_QUEUE",
    "--queue-timeout <duration>",
    '"10s"',
    "READINESS_PROXY_QUEUE_TIMEOUT",
    "--access-log",
    "READINESS_PROXY_ACCESS_LOG",
  ]) {
    t.match(help, expected, `help shows ${expected}`);
  }
});

t.test("every option has an environment variable, generated from the option table and listed in --help", async (t) => {
  const { OPTIONS, envName, flagName } = await import("../src/config/option-table.js");
  const help = run(["--help"]).out;
  const names = OPTIONS.map((spec) => envName(spec));
  t.equal(new Set(names).size, names.length, "each variable names one option");
  for (const spec of OPTIONS) {
    const flag = flagName(spec);
    t.match(envName(spec), /^READINESS_PROXY_[A-Z0-9_]+$/, flag);
    // The flag's entry in --help (it may wrap onto the next lines) names its variable.
    const entry = help.slice(help.indexOf(`  ${flag} `)).split(/\n {2}-/, 1)[0]!.replace(/\s+/g, " ");
    t.match(entry, `env: ${envName(spec)}`, `--help: ${flag} lists ${envName(spec)}`);
  }
  // CONTRACT §1's names where the generated one would differ, and generated names for the rest.
  const byFlag = Object.fromEntries(OPTIONS.map((spec) => [flagName(spec), envName(spec)]));
  t.match(byFlag, {
    "--readiness-required-listener": "READINESS_PROXY_REQUIRED_LISTENERS",
    "--readiness-cache-ttl": "READINESS_PROXY_CACHE_TTL",
    "--readiness-upstream-path": "READINESS_PROXY_UPSTREAM_PATH",
    "--readiness-upstream-listener": "READINESS_PROXY_UPSTREAM_LISTENER",
    "--response-header-timeout": "READINESS_PROXY_RESPONSE_HEADER_TIMEOUT",
    "--shutdown-delay": "READINESS_PROXY_SHUTDOWN_DELAY",
    "--shutdown-timeout": "READINESS_PROXY_SHUTDOWN_TIMEOUT",
    "--readiness-upstream-timeout": "READINESS_PROXY_UPSTREAM_TIMEOUT",
    "--readiness-warn-after": "READINESS_PROXY_WARN_AFTER",
    "--app-stop-timeout": "READINESS_PROXY_APP_STOP_TIMEOUT",
    "--error-pages-dir": "READINESS_PROXY_ERROR_PAGES_DIR",
    "--error-pages-intercept-upstream": "READINESS_PROXY_ERROR_PAGES_INTERCEPT_UPSTREAM",
  });
});

t.test("the options that had no variable: the env gives what the flag gives, and the flag wins", async (t) => {
  const env = {
    READINESS_PROXY_RESPONSE_HEADER_TIMEOUT: "2m",
    READINESS_PROXY_SHUTDOWN_DELAY: "5s",
    READINESS_PROXY_SHUTDOWN_TIMEOUT: "25s",
    READINESS_PROXY_UPSTREAM_TIMEOUT: "250ms",
    READINESS_PROXY_WARN_AFTER: "1m30s",
    READINESS_PROXY_APP_STOP_TIMEOUT: "10s",
    READINESS_PROXY_ERROR_PAGES_DIR: "/pages",
    READINESS_PROXY_ERROR_PAGES_INTERCEPT_UPSTREAM: "true",
  };
  t.match(config([], env), {
    responseHeaderTimeoutMs: 120_000,
    shutdownDelayMs: 5_000,
    shutdownTimeoutMs: 25_000,
    upstreamHealthTimeoutMs: 250,
    warnAfterMs: 90_000,
    appStopTimeoutMs: 10_000,
    errorPagesDir: "/pages",
    interceptUpstreamErrors: true,
  });
  t.equal(config([], { READINESS_PROXY_ERROR_PAGES_INTERCEPT_UPSTREAM: "0" }).interceptUpstreamErrors, false);
  t.equal(config(["--shutdown-delay", "1s"], env).shutdownDelayMs, 1_000, "the flag over the env");
});

t.test("a malformed value from the env is the same one-line exit-2 error as from the flag, naming the variable", async (t) => {
  const { OPTIONS, envName, flagName } = await import("../src/config/option-table.js");
  // Values some parser refuses: a bare number for durations, words for numbers, ports out of range.
  const candidates = ["5", "nope", "-1", "70000", "0x10", "1 s"];
  let compared = 0;
  for (const spec of OPTIONS) {
    if (spec.kind === "list" || spec.kind === "switch") continue;
    const flag = flagName(spec);
    // --max-queue and --queue-timeout are refused without the limiter: give it, so the value itself is judged.
    const context = flag === "--max-queue" || flag === "--queue-timeout" ? ["--max-concurrency", "4"] : [];
    for (const bad of candidates) {
      const fromFlag = run([...context, flag, bad]);
      if (fromFlag.result.action === "run") continue;
      const fromEnv = run(context, { [envName(spec)]: bad });
      t.same(fromEnv.result, { action: "exit", exitCode: 2 }, `${envName(spec)}=${bad}`);
      // The pod's env has READINESS_PROXY_SHUTDOWN_DELAY, not --shutdown-delay: the error names what was written.
      t.equal(fromEnv.err, fromFlag.err.replace(`error: ${flag}:`, `error: ${envName(spec)}:`), `${envName(spec)}=${JSON.stringify(bad)}: ${fromFlag.err.trim()}`);
      t.notMatch(fromEnv.err, /\n./, "one line");
      compared++;
      break;
    }
  }
  t.ok(compared >= 15, `${compared} options compared`);
  t.equal(run([], { READINESS_PROXY_SHUTDOWN_DELAY: "5" }).err, 'error: READINESS_PROXY_SHUTDOWN_DELAY: expected a duration like 500ms, 1s or 1m30s, got "5"\n', "the issue's own example");
  t.equal(run(["--shutdown-delay", "2s"], { READINESS_PROXY_SHUTDOWN_DELAY: "5" }).result.action, "run", "a flag wins, so the variable's value is never judged");
  const badSwitch = run([], { READINESS_PROXY_ERROR_PAGES_INTERCEPT_UPSTREAM: "yes" });
  t.same(badSwitch.result, { action: "exit", exitCode: 2 });
  t.equal(badSwitch.err, 'error: READINESS_PROXY_ERROR_PAGES_INTERCEPT_UPSTREAM: expected 1, true, 0 or false, got "yes"\n', "a switch takes no value on the command line: the variable is named");
});

t.test("an empty variable is as if unset, for every option (what Helm renders for a blank value)", async (t) => {
  const { OPTIONS, envName } = await import("../src/config/option-table.js");
  const defaults = config([]);
  for (const spec of OPTIONS) {
    const { result, err } = run([], { [envName(spec)]: "" });
    t.equal(result.action, "run", `${envName(spec)}= starts: ${err.trim()}`);
    if (result.action === "run") t.same(result.config, defaults, `${envName(spec)}= changes nothing`);
  }
  // The two the issue found: one turned a check on for "", the other was exit 2.
  t.equal(config([], { READINESS_PROXY_UPSTREAM_GRPC_SERVICE: "" }).upstreamGrpcService, undefined);
  t.equal(config([], { READINESS_PROXY_UPSTREAM_PATH: "" }).upstreamHealthPath, undefined);
  // The whole server ("") stays reachable by the flag, which says it on purpose.
  t.equal(config(["--readiness-upstream-grpc-service="]).upstreamGrpcService, "");
  t.equal(config(["--readiness-upstream-grpc-service", ""]).upstreamGrpcService, "");
  t.equal(run(["--readiness-upstream-path", ""]).result.action, "exit", "an empty flag value is still judged");
});

t.test("unknown READINESS_PROXY_ variables: a warning naming each and the closest known name; service links pass silently", async (t) => {
  const warningsOf = (env: NodeJS.ProcessEnv) => {
    const { result, err } = run([], env);
    if (result.action !== "run") throw new Error(`refused: ${err}`);
    return result.warnings;
  };
  t.same(warningsOf({ READINESS_PROXY_REQUIRED_LISTENER: "15008" }), [
    { msg: "unknown environment variable ignored", fields: { variable: "READINESS_PROXY_REQUIRED_LISTENER", didYouMean: "READINESS_PROXY_REQUIRED_LISTENERS" } },
  ], "the README's naming rule gives the singular; the real name is plural");
  t.same(
    warningsOf({ READINESS_PROXY_SHUTDOWN_DEALY: "5s", READINESS_PROXY_UPSTREAM_GRPC: "x", HOME: "/root", READINESS_PROXYLISTEN: ":1" }).map((warning) => warning.fields),
    [
      { variable: "READINESS_PROXY_SHUTDOWN_DEALY", didYouMean: "READINESS_PROXY_SHUTDOWN_DELAY" },
      { variable: "READINESS_PROXY_UPSTREAM_GRPC", didYouMean: "READINESS_PROXY_UPSTREAM_PATH" },
    ],
    "sorted; other variables are none of ours",
  );
  // What the kubelet injects when a Service named readiness-proxy (or readiness-proxy-metrics) is in the namespace.
  const serviceLinks = {
    READINESS_PROXY_SERVICE_HOST: "10.96.0.12",
    READINESS_PROXY_SERVICE_PORT: "8080",
    READINESS_PROXY_SERVICE_PORT_HTTP: "8080",
    READINESS_PROXY_PORT: "tcp://10.96.0.12:8080",
    READINESS_PROXY_PORT_8080_TCP: "tcp://10.96.0.12:8080",
    READINESS_PROXY_PORT_8080_TCP_PROTO: "tcp",
    READINESS_PROXY_PORT_8080_TCP_PORT: "8080",
    READINESS_PROXY_PORT_8080_TCP_ADDR: "10.96.0.12",
    READINESS_PROXY_METRICS_SERVICE_HOST: "10.96.0.13",
    READINESS_PROXY_METRICS_PORT_9090_TCP: "tcp://10.96.0.13:9090",
    READINESS_PROXY_TEST_FAULTS: "0",
  };
  t.same(warningsOf(serviceLinks), [], "never a warning, never a failed start");
  t.same(warningsOf({ READINESS_PROXY_LISTEN: ":8081", READINESS_PROXY_REQUIRED_LISTENERS: "15008" }), [], "known names");
});

t.test("a required listener on the proxy's own port would always pass: refused", async (t) => {
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--readiness-required-listener", "8080"], {}, "error: --readiness-required-listener: expected a port other than --listen's own (the proxy listens there, so it would always pass), got \"8080\""],
    [["--listen", "127.0.0.1:9000", "--readiness-required-listener=9000"], {}, "error: --readiness-required-listener: expected a port other than --listen's own (the proxy listens there, so it would always pass), got \"9000\""],
    [[], { READINESS_PROXY_REQUIRED_LISTENERS: "15008,8080" }, "error: READINESS_PROXY_REQUIRED_LISTENERS: expected a port other than --listen's own (the proxy listens there, so it would always pass), got \"8080\""],
    [["--metrics-listen", ":9090", "--readiness-required-listener", "9090"], {}, "error: --readiness-required-listener: expected a port other than --metrics-listen's own (the proxy listens there, so it would always pass), got \"9090\""],
  ];
  for (const [argv, env, message] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, argv.join(" ") || JSON.stringify(env));
    t.equal(err.trimEnd(), message);
  }
  t.same(config(["--listen", ":0", "--readiness-required-listener", "8080"]).requiredPorts, [8080], "port 0 (any free port) is no port of ours to compare");
});

t.test("--help shows each duration's default as the start line logs it (formatDuration: 2m, not 120s)", async (t) => {
  const { OPTIONS, flagName } = await import("../src/config/option-table.js");
  const { formatDuration, parseDuration } = await import("../src/config/duration.js");
  const durations = OPTIONS.filter((spec) => spec.kind === "value" && spec.flag.endsWith("<duration>"));
  t.ok(durations.length >= 8);
  for (const spec of durations) {
    if (spec.kind !== "value") continue;
    t.equal(spec.default, formatDuration(parseDuration(spec.default)!), `${flagName(spec)} default ${spec.default}`);
  }
  const listening = describeConfig(config([]));
  t.match(listening, { responseHeaderTimeout: "2m", readinessWarnAfter: "1m" }, "the start line's form");
  t.match(run(["--help"]).out.replace(/\s+/g, " "), /--response-header-timeout <duration> .*\(default: "2m"/);
});

t.test("--metrics-merge: a loopback http URL, only with --metrics-listen, from the flag or the env", async (t) => {
  const merged = config(["--metrics-listen", ":9090", "--metrics-merge", "http://127.0.0.1:8000/metrics"]);
  t.equal(merged.metricsMerge, "http://127.0.0.1:8000/metrics");
  t.equal(config(["--metrics-listen", ":9090"], { READINESS_PROXY_METRICS_MERGE: "http://[::1]:9100/metrics" }).metricsMerge, "http://[::1]:9100/metrics");
  t.equal(config(["--metrics-listen", ":9090", "--metrics-merge=http://localhost:9100/"], { READINESS_PROXY_METRICS_MERGE: "http://127.0.0.1:1/" }).metricsMerge, "http://localhost:9100/", "the flag wins");
  t.equal(config([]).metricsMerge, undefined, "off by default");
  t.match(describeConfig(merged), { metricsMerge: "http://127.0.0.1:8000/metrics" });
  t.match(run(["--help"]).out.replace(/\s+/g, " "), /--metrics-merge <url> .*env: READINESS_PROXY_METRICS_MERGE/);
  const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
    [["--metrics-listen", ":9090", "--metrics-merge", "http://10.0.0.5:8000/metrics"], {}, 'error: --metrics-merge: expected a loopback host (127.0.0.0/8, [::1] or localhost), got "http://10.0.0.5:8000/metrics"'],
    [["--metrics-listen", ":9090", "--metrics-merge", "https://127.0.0.1:8000/metrics"], {}, 'error: --metrics-merge: expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit, got "https://127.0.0.1:8000/metrics"'],
    [["--metrics-listen", ":9090", "--metrics-merge", "/metrics"], {}, 'error: --metrics-merge: expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit, got "/metrics"'],
    [["--metrics-listen", ":9090"], { READINESS_PROXY_METRICS_MERGE: "http://app:8000/metrics" }, 'error: READINESS_PROXY_METRICS_MERGE: expected a loopback host (127.0.0.0/8, [::1] or localhost), got "http://app:8000/metrics"'],
    [["--metrics-merge", "http://127.0.0.1:8000/metrics"], {}, 'error: --metrics-merge: expected only with --metrics-listen, got "http://127.0.0.1:8000/metrics"'],
    [[], { READINESS_PROXY_METRICS_MERGE: "http://127.0.0.1:8000/metrics" }, 'error: READINESS_PROXY_METRICS_MERGE: expected only with --metrics-listen, got "http://127.0.0.1:8000/metrics"'],
  ];
  for (const [argv, env, message] of cases) {
    const { result, err } = run(argv, env);
    t.same(result, { action: "exit", exitCode: 2 }, argv.join(" ") || JSON.stringify(env));
    t.equal(err.trimEnd(), message);
    t.notMatch(err, /\bat .*\.(ts|js):\d+/, "no stack trace");
  }
});
