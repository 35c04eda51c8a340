// grpc.health.v1 Watch streams: each told its status at once and on every change, all fed by one shared poll of the cached check while any watcher needs it.
import type { ReadinessReport } from "../readiness/check-results.js";
import { SERVING_STATUS, framedHealthCheckResponse, type ServingStatus } from "../grpc/health-messages.js";
import type { DrainState } from "../http/drain-state.js";
import { servingStatusOf, type HealthTarget } from "./health-status.js";
import type { GrpcResponder } from "./grpc-responder.js";
import { GRPC_STATUS } from "../grpc/grpc-status.js";

/** The readiness check as the watchers use it (ReadinessCheck, or a counted fake in tests). */
export interface ReportSource {
  peek(): ReadinessReport | undefined;
  check(): Promise<ReadinessReport>;
}

/** Timers, injected so tests advance them by hand. */
export interface Scheduler {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemScheduler: Scheduler = {
  // Unref'd: a watcher never keeps the process alive on its own; the listener does that.
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The poll waits the TTL plus this after a run settles: the cache expires exactly one TTL after
 * the run, and a timer on the event loop's coarser clock can fire a fraction of a millisecond
 * before that, find the old result still fresh, and see the change a whole TTL late.
 */
const EXPIRY_SLACK_MS = 2;


/** One Watch call: sends a status only when it differs from the last one sent, and only the latest while the stream is buffering. */
class Watcher {
  readonly target: HealthTarget;
  readonly responder: GrpcResponder;
  #last: ServingStatus | undefined;
  #pending: ServingStatus | undefined;
  #blocked = false;

  constructor(target: HealthTarget, responder: GrpcResponder) {
    this.target = target;
    this.responder = responder;
    responder.onWritable(() => this.#writable());
  }

  publish(status: ServingStatus): void {
    if (this.#blocked) {
      // A reader that stops holds one status, never a backlog: the latest is what it gets.
      this.#pending = status;
      return;
    }
    if (status === this.#last) return;
    this.#last = status;
    if (!this.responder.sendMessage(framedHealthCheckResponse(status))) this.#blocked = true;
  }

  #writable(): void {
    this.#blocked = false;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.publish(pending);
  }
}

export interface HealthWatchersOptions {
  readonly readiness: ReportSource;
  readonly drain: DrainState;
  readonly ttlMs: number;
  readonly scheduler?: Scheduler;
}

/** Every open Watch call, and the one poll timer that runs while any of them follows readiness. */
export class HealthWatchers {
  readonly #readiness: ReportSource;
  readonly #drain: DrainState;
  readonly #ttlMs: number;
  readonly #scheduler: Scheduler;
  readonly #watchers = new Set<Watcher>();
  /** The poll's pending timer; undefined while its check is in flight or when not polling. */
  #poll: unknown;
  #polling = false;
  /** Bumped when polling stops, so a check still in flight from before schedules nothing. */
  #generation = 0;
  #lastReport: ReadinessReport | undefined;
  #closed = false;

  constructor(options: HealthWatchersOptions) {
    this.#readiness = options.readiness;
    this.#drain = options.drain;
    this.#ttlMs = options.ttlMs;
    this.#scheduler = options.scheduler ?? systemScheduler;
  }

  get size(): number {
    return this.#watchers.size;
  }

  /** Starts a Watch: headers, the status at once (after the shared run when nothing is cached), then every change. */
  add(target: HealthTarget, responder: GrpcResponder): void {
    const watcher = new Watcher(target, responder);
    responder.sendHeaders();
    if (this.#closed) {
      this.#publishOne(watcher, this.#lastReport);
      responder.sendTrailers(GRPC_STATUS.OK);
      return;
    }
    this.#watchers.add(watcher);
    responder.onClose(() => this.#remove(watcher));
    if (target.kind === "liveness") {
      // Liveness needs no check: no poll for it.
      this.#publishOne(watcher, undefined);
      return;
    }
    const cached = this.#readiness.peek();
    if (cached !== undefined) this.#publishOne(watcher, cached);
    else this.#readiness.check().then((report) => this.#publishAll(report), () => {});
    this.#startPolling();
  }

  /** The drain began: readiness watchers hear NOT_SERVING now, not at the next poll. */
  drainBegan(): void {
    const report = this.#lastReport ?? this.#readiness.peek();
    if (report !== undefined) this.#publishAll(report);
    else this.#readiness.check().then((fresh) => this.#publishAll(fresh), () => {});
  }

  /** The listener closes: every Watch ends with grpc-status 0, so none holds the drain open. */
  close(): void {
    this.#closed = true;
    this.#stopPolling();
    const watchers = [...this.#watchers];
    this.#watchers.clear();
    for (const watcher of watchers) watcher.responder.sendTrailers(GRPC_STATUS.OK);
  }

  #remove(watcher: Watcher): void {
    this.#watchers.delete(watcher);
    if (!this.#needsReports()) this.#stopPolling();
  }

  #publishOne(watcher: Watcher, report: ReadinessReport | undefined): void {
    if (watcher.target.kind === "liveness") watcher.publish(SERVING_STATUS.SERVING);
    else if (report !== undefined) watcher.publish(servingStatusOf(watcher.target, report, this.#drain));
  }

  #publishAll(report: ReadinessReport): void {
    this.#lastReport = report;
    for (const watcher of this.#watchers) this.#publishOne(watcher, report);
  }

  #needsReports(): boolean {
    for (const watcher of this.#watchers) if (watcher.target.kind !== "liveness") return true;
    return false;
  }

  #startPolling(): void {
    if (this.#polling || this.#closed) return;
    this.#polling = true;
    this.#schedule();
  }

  #stopPolling(): void {
    if (this.#poll !== undefined) this.#scheduler.clearTimeout(this.#poll);
    this.#poll = undefined;
    this.#polling = false;
    this.#generation++;
  }

  #schedule(): void {
    this.#poll = this.#scheduler.setTimeout(() => this.#tick(), this.#ttlMs + EXPIRY_SLACK_MS);
  }

  /** One poll: the shared cached check (a run only when it expired), then the next poll after the TTL. */
  #tick(): void {
    this.#poll = undefined;
    const generation = this.#generation;
    const settle = (report: ReadinessReport | undefined) => {
      if (generation !== this.#generation) return;
      if (report !== undefined) this.#publishAll(report);
      if (this.#needsReports()) this.#schedule();
      else this.#polling = false;
    };
    this.#readiness.check().then(settle, () => settle(undefined));
  }
}
