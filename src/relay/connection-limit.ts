// --max-connections (CONTRACT §18), once for both protocols: open client connections counted by socket, idle ones kept oldest first, the oldest shed to admit a new one, the rest held unread until one ends.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { KeepAliveDeadlines, type IdleMember } from "./keep-alive-deadlines.js";

/** What the metrics read (plain numbers, read only on a scrape). */
export interface ClientConnectionCounts {
  /** Open client connections on the listener, both protocols. */
  readonly open: number;
  /** Idle ones closed to admit another. */
  readonly shed: number;
}

/** The warn line is written at most this often. */
export const LIMIT_WARN_INTERVAL_MS = 60_000;

/**
 * Accepted at the limit with nothing idle to close: held, unread, at most this many (node's listen
 * backlog), until a connection ends; past that a new one is closed at once, as a full backlog
 * drops it. Node cannot stop a listening socket from accepting, so these stand for the kernel's
 * backlog; each costs a descriptor and a socket, never a parser.
 */
export const MAX_HELD = 511;

/**
 * The limit. Its idle connections are the listener's one keep-alive deadline structure (kept
 * whatever the limit, 0 included: the sweep ends their keep-alive from it), oldest first, so the
 * first one still idle is the one shed.
 */
export class ConnectionLimit implements ClientConnectionCounts {
  open = 0;
  shed = 0;
  readonly #limit: number;
  readonly #log: Logger;
  readonly #clock: () => number;
  /** Idle client connections of both protocols, in the order they became idle. */
  readonly idle = new KeepAliveDeadlines();
  readonly #held: Held[] = [];
  #lastWarn = -Infinity;

  constructor(limit: number, log: Logger, clock: () => number = Date.now) {
    this.#limit = limit;
    this.#log = log;
    this.#clock = clock;
  }

  /** Connections held unread at the limit. */
  get held(): number {
    return this.#held.length;
  }

  /** A connection accepted: `start` runs now (after an idle one is shed, at the limit), or once another ends. */
  admit(socket: Socket, start: (socket: Socket) => void): void {
    if (this.#limit > 0 && this.open >= this.#limit && !this.#shedOldestIdle()) {
      this.#hold(socket, start);
      return;
    }
    this.#count(socket);
    start(socket);
  }

  /** `member` carries nothing now: the newest idle one; or, with connections waiting, closed to let the first in. */
  becameIdle(member: IdleMember): void {
    this.idle.becameIdle(member);
    // Out of the callback that ended its answer; its close admits the first held one (#ended).
    if (this.#held.length > 0) queueMicrotask(() => this.#shedIfStillIdle(member));
  }

  /** A connection just admitted, nothing read yet: the newest idle one (never shed for the held ones: it was let in for them). */
  opened(member: IdleMember): void {
    this.idle.becameIdle(member);
  }

  #shedIfStillIdle(member: IdleMember): void {
    if (this.#held.length === 0 || !this.idle.has(member) || !member.idleKeepAlive) return;
    this.idle.forget(member);
    this.#shed(member);
  }

  /** `member` closed (or is no longer this limit's, as an HTTP/1.1 connection that became HTTP/2). */
  forget(member: IdleMember): void {
    this.idle.forget(member);
  }

  /** The shutdown's last step: connections still waiting are closed, never served. */
  destroyHeld(): void {
    for (const { socket } of this.#held.splice(0)) socket.destroy();
  }

  #count(socket: Socket): void {
    this.open++;
    // One function for every socket, and `on` (a socket closes once): `once` and a closure were
    // two more objects per idle connection.
    socket.on("close", this.#socketClosed);
  }

  readonly #socketClosed = (): void => this.#ended();

  #ended(): void {
    this.open--;
    while (this.#held.length > 0 && (this.#limit === 0 || this.open < this.#limit)) {
      const { socket, start } = this.#held.shift() as Held;
      if (socket.destroyed) continue;
      socket.removeListener("error", ignore);
      this.#count(socket);
      start(socket);
      socket.resume();
    }
  }

  /** The longest-idle connection is closed to make room: true when there was one. */
  #shedOldestIdle(): boolean {
    const member = this.idle.takeOldest();
    if (member === undefined) return false;
    this.#shed(member);
    return true;
  }

  #shed(member: IdleMember): void {
    this.shed++;
    this.#warn();
    member.shedIdle();
  }

  #hold(socket: Socket, start: (socket: Socket) => void): void {
    this.#warn();
    if (this.#held.length >= MAX_HELD) {
      socket.destroy();
      return;
    }
    // Unread: what the client sent waits in the socket's buffers, bounded by its high-water mark.
    socket.pause();
    // Its close follows an error; a held socket that closed is skipped when its turn comes.
    socket.on("error", ignore);
    this.#held.push({ socket, start });
  }

  #warn(): void {
    const now = this.#clock();
    if (now - this.#lastWarn < LIMIT_WARN_INTERVAL_MS) return;
    this.#lastWarn = now;
    this.#log.warn({ limit: this.#limit, shed: this.shed }, "connection limit reached");
  }
}

/** A connection accepted at the limit, waiting for one to end. */
interface Held {
  readonly socket: Socket;
  readonly start: (socket: Socket) => void;
}

function ignore(): void {}
