// Wires a validated Config into a daemon ready to start: check, pages, proxy, server, shutdown. Used by main.ts and the HTTP tests.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Logger } from "pino";
import type { Config } from "./cli.js";
import { describeConfig } from "./cli.js";
import { formatListenAddress } from "./config/listen-address.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError } from "./errors.js";
import { AppProcess } from "./app/app-process.js";
import { loadErrorPages } from "./http/error-pages.js";
import { ErrorResponder } from "./http/error-response.js";
import { HealthEndpoints } from "./http/health.js";
import { ReverseProxy } from "./http/proxy.js";
import { createProxyServer } from "./http/server.js";
import { createUpgradeTunnel } from "./http/upgrade-tunnel.js";
import { ListenerScanner, type TableReader } from "./procfs/listener-scan.js";
import { ReadinessCheck } from "./readiness/readiness-check.js";
import { UpstreamProbe } from "./readiness/upstream-probe.js";
import { GracefulShutdown } from "./shutdown.js";

export interface Daemon {
  readonly server: Server;
  /** The app of the entrypoint form; undefined in the sidecar form. */
  readonly app: AppProcess | undefined;
  readonly readiness: ReadinessCheck;
  readonly shutdown: GracefulShutdown;
  /**
   * Opens the listener, logs `listening`, runs the first check, then starts the app (entrypoint
   * form) so that no request of the app's can arrive before we serve; resolves with the address
   * bound (port 0 resolved). Rejects with a listen error (exit 1, the app never started) or an
   * app start error (exit 127 or 126).
   */
  start(): Promise<AddressInfo>;
}

export interface DaemonOptions {
  readonly log: Logger;
  /** Injected in tests to count or fail socket table reads. */
  readonly readTable?: TableReader;
}

/**
 * Builds the daemon without opening the listener, so the caller can install signal handlers
 * first (a SIGTERM right after `listening` must find them). Throws a usage error (exit 2) for
 * an unreadable --error-pages-dir; `start` rejects with a listen error (exit 1) when the address
 * is in use or not permitted.
 */
export function createDaemon(config: Config, { log, readTable }: DaemonOptions): Daemon {
  const errors = new ErrorResponder(loadErrorPages(config.errorPagesDir));
  const upstreamProbe =
    config.upstreamHealthPath === undefined
      ? undefined
      : new UpstreamProbe({ origin: config.upstream.origin, path: config.upstreamHealthPath, timeoutMs: config.upstreamHealthTimeoutMs });
  const readiness = new ReadinessCheck({
    requiredPorts: config.requiredPorts,
    scanner: new ListenerScanner({ procRoot: config.procRoot, readTable }),
    log,
    ttlMs: config.cacheTtlMs,
    upstream: upstreamProbe && { path: config.upstreamHealthPath!, probe: () => upstreamProbe.probe() },
    warnAfterMs: config.warnAfterMs,
  });
  const proxy = new ReverseProxy({
    upstream: config.upstream,
    responseHeaderTimeoutMs: config.responseHeaderTimeoutMs,
    errors,
    log,
    interceptUpstreamErrors: config.interceptUpstreamErrors,
  });
  // Set by the shutdown, read by /readyz and the server.
  const drain = { draining: false };
  const tunnel = createUpgradeTunnel({ upstream: config.upstream, log, responseHeaderTimeoutMs: config.responseHeaderTimeoutMs });
  const server = createProxyServer({ health: new HealthEndpoints(readiness, drain, errors), proxy, drain, upgrade: tunnel.handle });
  const app = config.appCommand.length > 0 ? new AppProcess({ command: config.appCommand, log, stopTimeoutMs: config.appStopTimeoutMs }) : undefined;
  const shutdown = new GracefulShutdown({
    drain,
    server,
    log,
    delayMs: config.shutdownDelayMs,
    timeoutMs: config.shutdownTimeoutMs,
    closeUpstream: async () => {
      tunnel.closeAll();
      await Promise.all([proxy.close(), upstreamProbe?.close()]);
    },
    // The app gets the signal we got (SIGINT stays SIGINT); after its own exit there is none to send.
    afterDrain: app ? (reason) => app.stop(reason === "SIGINT" ? "SIGINT" : "SIGTERM") : undefined,
  });
  const start = async () => {
    const address = await listen(server, config);
    log.info(
      {
        listen: formatListenAddress({ host: config.listen.host, port: address.port }),
        upstream: config.upstream.url,
        requiredListeners: config.requiredPorts,
        upstreamHealthPath: config.upstreamHealthPath,
        procRoot: config.procRoot,
        ...describeConfig(config),
      },
      "listening",
    );
    // The first check runs now, so the starting state is logged and the first probe is cached.
    void readiness.check();
    await app?.start();
    return address;
  };
  return { server, app, readiness, shutdown, start };
}

function listen(server: Server, config: Config): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const where = formatListenAddress(config.listen);
      const why =
        error.code === "EADDRINUSE"
          ? "address already in use"
          : error.code === "EACCES"
            ? "permission denied"
            : error.code === "EADDRNOTAVAIL"
              ? "address not available on this host"
              : error.message;
      reject(new ReadinessProxyError(ERROR_CODES.listen, `cannot listen on ${where}: ${why}`, EXIT_CODES.runtime));
    };
    server.once("error", onError);
    server.listen({ host: config.listen.host, port: config.listen.port }, () => {
      server.off("error", onError);
      resolve(server.address() as AddressInfo);
    });
  });
}
