// The one keep-alive deadline structure on a clock given as numbers: ends the connections whose keep-alive ran out, oldest first, looking past them at one member only; drops busy ones; the oldest idle is the one shed.
import t from "tap";
import { KeepAliveDeadlines, type IdleMember } from "../../src/relay/keep-alive-deadlines.js";

const KEEP_ALIVE_MS = 620_000;

/** A member whose reads are counted, so a test can say how many the structure looked at. */
class Member implements IdleMember {
  static looks = 0;
  busy = false;
  ended = 0;
  shed = 0;
  #idleSince: number;

  constructor(
    readonly name: string,
    idleSince: number,
  ) {
    this.#idleSince = idleSince;
  }

  get idleKeepAlive(): boolean {
    Member.looks++;
    return !this.busy;
  }

  get idleSince(): number {
    return this.#idleSince;
  }

  idleAgain(now: number, deadlines: KeepAliveDeadlines): void {
    this.busy = false;
    this.#idleSince = now;
    deadlines.becameIdle(this);
  }

  shedIdle(): void {
    this.shed++;
  }

  keepAliveEnded(): void {
    this.ended++;
  }
}

t.test("at each tick only the connections whose keep-alive ran out are ended, oldest first, and one more is looked at", async (t) => {
  const deadlines = new KeepAliveDeadlines();
  const members = Array.from({ length: 1_000 }, (_, index) => new Member(`m${index}`, index * 1_000));
  for (const member of members) deadlines.becameIdle(member);
  Member.looks = 0;
  t.equal(deadlines.expire(KEEP_ALIVE_MS - 1, KEEP_ALIVE_MS), 0, "none is due a millisecond before the first");
  t.equal(Member.looks, 1, "only the first was looked at");
  Member.looks = 0;
  t.equal(deadlines.expire(KEEP_ALIVE_MS + 2_000, KEEP_ALIVE_MS), 3, "the three idle since 0, 1 and 2 s");
  t.equal(Member.looks, 4, "those three and the next, not the other 996");
  t.same(
    members.filter((member) => member.ended > 0).map((member) => member.name),
    ["m0", "m1", "m2"],
  );
  t.equal(deadlines.size, 997);
  t.equal(deadlines.expire(KEEP_ALIVE_MS + 2_000, KEEP_ALIVE_MS), 0, "an ended one is out: never ended twice");
});

t.test("a connection idle again is moved to the end with its new time", async (t) => {
  const deadlines = new KeepAliveDeadlines();
  const [first, second] = [new Member("first", 0), new Member("second", 1_000)];
  deadlines.becameIdle(first);
  deadlines.becameIdle(second);
  first.busy = true;
  first.idleAgain(5_000, deadlines);
  t.equal(deadlines.expire(KEEP_ALIVE_MS + 1_000, KEEP_ALIVE_MS), 1);
  t.same([first.ended, second.ended], [0, 1], "the second's deadline came first");
  t.equal(deadlines.expire(KEEP_ALIVE_MS + 5_000, KEEP_ALIVE_MS), 1);
  t.equal(first.ended, 1, "then the first's, from when it became idle again");
});

t.test("a busy connection met in the structure is dropped, neither ended nor shed, and comes back when idle again", async (t) => {
  const deadlines = new KeepAliveDeadlines();
  const [busy, idle] = [new Member("busy", 0), new Member("idle", 1_000)];
  deadlines.becameIdle(busy);
  deadlines.becameIdle(idle);
  busy.busy = true;
  t.equal(deadlines.takeOldest(), idle, "the oldest idle one is shed, the busy one before it skipped");
  t.equal(deadlines.size, 0, "the busy one was dropped on the way");
  busy.idleAgain(2_000, deadlines);
  t.equal(deadlines.expire(KEEP_ALIVE_MS + 2_000, KEEP_ALIVE_MS), 1);
  t.equal(busy.ended, 1, "ended from the time it became idle again");
  const stillBusy = new Member("still busy", 0);
  deadlines.becameIdle(stillBusy);
  stillBusy.busy = true;
  t.equal(deadlines.expire(10 * KEEP_ALIVE_MS, KEEP_ALIVE_MS), 0);
  t.equal(stillBusy.ended, 0, "a busy one's keep-alive does not run");
  t.equal(deadlines.size, 0);
});

t.test("a forgotten connection (closed, or gone to HTTP/2) is never ended nor shed", async (t) => {
  const deadlines = new KeepAliveDeadlines();
  const member = new Member("gone", 0);
  deadlines.becameIdle(member);
  deadlines.forget(member);
  t.equal(deadlines.expire(KEEP_ALIVE_MS, KEEP_ALIVE_MS), 0);
  t.equal(deadlines.takeOldest(), undefined);
  t.equal(member.ended + member.shed, 0);
});
