// The listener's one keep-alive deadline structure, both protocols: idle client connections in the order they became idle, so the sweep closes those whose keep-alive ran out by looking at the oldest only, and --max-connections sheds the oldest.

/** A client connection as the structure sees it. */
export interface IdleMember {
  /** Nothing in flight and nothing begun: closing it now loses nothing. */
  readonly idleKeepAlive: boolean;
  /** When it last became idle, on the listener's coarse clock (the time it was put in). */
  readonly idleSince: number;
  /** Closes it to admit another at --max-connections (HTTP/1.1: now; h2: GOAWAY NO_ERROR, then the close). */
  shedIdle(): void;
  /** Its keep-alive ran out: closed as an idle one is (HTTP/1.1: now; h2: GOAWAY NO_ERROR, then the close). */
  keepAliveEnded(): void;
}

/**
 * A Set used as a list ordered by deadline: the keep-alive time is one for every connection and
 * a connection that becomes idle is moved to the end with the clock's time, so the first entry's
 * deadline is the nearest. One that became busy again stays in place and is dropped when met,
 * so the busy path costs one delete and one add when an answer ends, and the sweep's cost
 * follows the connections whose keep-alive ran out (and the busy ones it drops), not the idle
 * ones: before, every sweep looked at every connection's idle time.
 */
export class KeepAliveDeadlines {
  readonly #idle = new Set<IdleMember>();

  /** Idle ones, and busy ones not yet met. */
  get size(): number {
    return this.#idle.size;
  }

  has(member: IdleMember): boolean {
    return this.#idle.has(member);
  }

  /** `member` carries nothing now (its `idleSince` the clock's time): the newest idle one. */
  becameIdle(member: IdleMember): void {
    this.#idle.delete(member);
    this.#idle.add(member);
  }

  /** `member` closed, or is no longer this listener's side's (an HTTP/1.1 connection that became HTTP/2). */
  forget(member: IdleMember): void {
    this.#idle.delete(member);
  }

  /** The longest-idle connection still idle, taken out (for shedding); busy ones met on the way are dropped. */
  takeOldest(): IdleMember | undefined {
    for (const member of this.#idle) {
      this.#idle.delete(member);
      if (member.idleKeepAlive) return member;
    }
    return undefined;
  }

  /** At `now`, those idle for `keepAliveMs` or longer are taken out and ended, oldest first; returns how many. */
  expire(now: number, keepAliveMs: number): number {
    let ended = 0;
    for (const member of this.#idle) {
      if (!member.idleKeepAlive) {
        this.#idle.delete(member);
        continue;
      }
      if (now - member.idleSince < keepAliveMs) break;
      this.#idle.delete(member);
      ended++;
      member.keepAliveEnded();
    }
    return ended;
  }
}
