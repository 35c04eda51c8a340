// The non-Node peers a user would pick instead of us: HAProxy, Caddy and Go's httputil.ReverseProxy, each on one core's worth of threads.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startListening } from "../lib/processes.mjs";

/** Why `command` cannot be run here (with the Debian package that has it), or null. */
export function missingCommand(command, debianPackage) {
  if (spawnSync("sh", ["-c", `command -v ${command}`]).status === 0) return null;
  return `${command} is not installed (apt-get install ${debianPackage}; make bench installs it when run as root)`;
}

/** HAProxy in the foreground (-db: no daemon, no master), one thread, upstream connections reused by any client. */
export function startHaproxy({ port, upstreamPort }) {
  const root = mkdtempSync(join(tmpdir(), "rp-bench-haproxy-"));
  writeFileSync(
    join(root, "haproxy.cfg"),
    `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend proxy
  bind 127.0.0.1:${port}
  default_backend app
backend app
  http-reuse always
  server app 127.0.0.1:${upstreamPort}
`,
  );
  return startListening(["haproxy", "-db", "-f", join(root, "haproxy.cfg")], port, { stderr: openSync(join(root, "haproxy.log"), "w") });
}

/** Caddy's reverse_proxy with 64 idle upstream connections (nginx's `keepalive 64`), no admin API, no HTTPS, GOMAXPROCS=1. */
export function startCaddy({ port, upstreamPort }) {
  const root = mkdtempSync(join(tmpdir(), "rp-bench-caddy-"));
  writeFileSync(
    join(root, "Caddyfile"),
    `{
	admin off
	auto_https off
	storage file_system ${root}/data
	log {
		output file ${root}/caddy.log
		level WARN
	}
}
http://:${port} {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:${upstreamPort} {
		transport http {
			keepalive 30s
			keepalive_idle_conns_per_host 64
		}
	}
}
`,
  );
  // Caddy autosaves its config under XDG_CONFIG_HOME: kept inside the temporary directory.
  const env = { ...process.env, GOMAXPROCS: "1", HOME: root, XDG_CONFIG_HOME: join(root, "config"), XDG_DATA_HOME: join(root, "data") };
  return startListening(["caddy", "run", "--config", join(root, "Caddyfile"), "--adapter", "caddyfile"], port, {
    env,
    stderr: openSync(join(root, "caddy-stderr.log"), "w"),
  });
}

/**
 * Builds bench/targets/go-reverse-proxy with the machine's Go into dist/bench (never committed):
 * stdlib only, so GOPROXY=off and GOTOOLCHAIN=local keep `go build` from fetching anything, and
 * CGO_ENABLED=0 keeps it from needing a C compiler. Returns the program's path; throws with the
 * compiler's last words.
 */
export function buildGoReverseProxy({ root, here }) {
  const out = join(root, "dist/bench");
  mkdirSync(out, { recursive: true });
  const program = join(out, "go-reverse-proxy");
  const env = { ...process.env, GOTOOLCHAIN: "local", GOPROXY: "off", GOFLAGS: "", CGO_ENABLED: "0" };
  // Go needs a build cache; without HOME it has no default one.
  if (!env.HOME && !env.XDG_CACHE_HOME && !env.GOCACHE) env.GOCACHE = join(out, "go-cache");
  const built = spawnSync("go", ["build", "-trimpath", "-o", program, "."], { cwd: join(here, "targets/go-reverse-proxy"), env, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`go build failed: ${(built.stderr || built.error?.message || "").trim().split("\n").at(-1)}`);
  return program;
}

/** Go's httputil.ReverseProxy (built by buildGoReverseProxy) with GOMAXPROCS=1. */
export function startGoReverseProxy({ program, port, upstreamUrl }) {
  // Its log goes to a file: each run's end cancels requests in flight, one "proxy error" line each.
  const stderr = openSync(join(mkdtempSync(join(tmpdir(), "rp-bench-go-")), "go-reverse-proxy.log"), "w");
  return startListening([program, `127.0.0.1:${port}`, upstreamUrl], port, { env: { ...process.env, GOMAXPROCS: "1" }, stderr });
}

/** "nginx 1.22.1, HAProxy 2.6.12, ..." for the results header: the versions decide what a row means. */
export function peerVersions() {
  const version = (argv, pattern) => {
    const ran = spawnSync(argv[0], argv.slice(1), { encoding: "utf8" });
    return pattern.exec(`${ran.stdout ?? ""}${ran.stderr ?? ""}`)?.[1];
  };
  const found = [
    ["nginx", version(["nginx", "-v"], /nginx\/(\S+)/)],
    ["HAProxy", version(["haproxy", "-v"], /version (\S+)/)],
    ["Caddy", version(["caddy", "version"], /^v?(\S+)/)],
    ["Go", version(["go", "version"], /go version go(\S+)/)],
  ];
  return found.filter(([, number]) => number).map(([name, number]) => `${name} ${number}`).join(", ");
}
