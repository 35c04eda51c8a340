// nginx as the upstream (a 100-byte and a 1 MiB static file) and as a peer proxy (1 worker, upstream keep-alive), each its own process.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childPids, startListening } from "../lib/processes.mjs";

function config(root, server) {
  return `
daemon off;
master_process on;
worker_processes 1;
pid ${root}/nginx.pid;
error_log ${root}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${root}/tmp;
  proxy_temp_path ${root}/tmp;
  fastcgi_temp_path ${root}/tmp;
  uwsgi_temp_path ${root}/tmp;
  scgi_temp_path ${root}/tmp;
  keepalive_requests 1000000;
  ${server}
}`;
}

async function startNginx(name, server, port) {
  const root = mkdtempSync(join(tmpdir(), `rp-bench-${name}-`));
  mkdirSync(join(root, "tmp"));
  mkdirSync(join(root, "www"));
  writeFileSync(join(root, "www", "file"), "x".repeat(99) + "\n");
  writeFileSync(join(root, "www", "big"), Buffer.alloc(1024 * 1024, 0x62)); // section 1's 1 MiB downloads
  // nginx workers run as an unprivileged user; mkdtemp made the directory private.
  chmodSync(root, 0o755);
  writeFileSync(join(root, "nginx.conf"), config(root, server.replaceAll("ROOT", root)));
  const child = await startListening(["nginx", "-p", root, "-c", join(root, "nginx.conf")], port);
  return { child, pids: () => [child.pid, ...childPids(child.pid)] };
}

/** The upstream: serves /file (100 bytes) and /big (1 MiB) with keep-alive. */
export function startUpstreamNginx(port) {
  return startNginx("upstream", `server { listen 127.0.0.1:${port}; root ROOT/www; location / { } }`, port);
}

/**
 * An h2c upstream: `listen ... http2` without TLS is HTTP/2 with prior knowledge only (nginx
 * 1.22's syntax; 1.25 moved it to `http2 on;`), serving the same /file and /big.
 */
export function startH2cUpstreamNginx(port) {
  return startNginx("h2c-upstream", `server { listen 127.0.0.1:${port} http2; root ROOT/www; location / { } }`, port);
}

/** The nginx peer proxy; `streaming` turns response buffering off (what SSE needs). */
export function startProxyNginx(port, upstreamPort) {
  return startNginx(
    "proxy",
    `upstream app { server 127.0.0.1:${upstreamPort}; keepalive 64; }
     server {
       listen 127.0.0.1:${port};
       location / {
         proxy_pass http://app;
         proxy_http_version 1.1;
         proxy_set_header Connection "";
         proxy_buffering off;
       }
     }`,
    port,
  );
}
