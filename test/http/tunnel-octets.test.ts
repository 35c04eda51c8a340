// Memory follows octets, never pieces, in a WebSocket tunnel: 1-octet pieces toward a side that does not read cost the proxy a bound in octets (on the wire through the daemon, and both ways on the tunnel's own sockets), and every octet arrives, in order, once that side reads.
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import t, { type Test } from "tap";
import { NO_PROXY_OBSERVER } from "../../src/relay/proxy-observer.js";
import { openTunnel, TUNNEL_WAIT_BOUND } from "../../src/relay/http1/tunnel.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { heldAfterGc, mib } from "../helpers/held-memory.js";
import { deferred } from "../helpers/test-doubles.js";

/**
 * Past all a tunnel held before it stopped reading when its two sides were joined by node's pipe
 * (the destination's writable and the paused source's readable, 64 KiB of pieces each), and past
 * the few hundred writes a unix socket takes in before it refuses.
 */
const OCTETS = 128 * 1024;
/**
 * A direction holds 64 KiB waiting and the write before it, each in a buffer that doubles (so
 * up to twice): well under 1 MiB for both. The rest is the heap's noise between two looks
 * (±3 MiB here). A piece kept as its own Buffer costs ~240 bytes per octet: ~30 MiB a direction.
 */
const BOUND = 8 * 1024 * 1024;
/** Octets sent while the far side reads, before the heap is first looked at: the code of both paths has run. */
const WARM_UP = 16 * 1024;

/** The octet at `index` of a stream: a pattern, so a lost, doubled or moved octet shows. */
const octetAt = (index: number): number => index % 251;

/** What a socket has read of the pattern. Paused, with a readable mark of 1, its handle stops: it keeps at most one read. */
class Receiver {
  received = 0;
  /** The first octet out of place, or -1. */
  misplaced = -1;
  readonly #wakes = new Set<() => void>();

  constructor(readonly socket: Socket) {
    socket.on("data", (data: Buffer) => {
      for (let at = 0; at < data.length; at++) if (this.misplaced < 0 && data[at] !== octetAt(this.received + at)) this.misplaced = this.received + at;
      this.received += data.length;
      for (const wake of [...this.#wakes]) wake();
    });
    socket.on("end", () => {
      for (const wake of [...this.#wakes]) wake();
    });
  }

  /** Resolves with what was read once it is `octets`, or once the socket ends short of them. */
  until(octets: number): Promise<number> {
    return new Promise((resolve) => {
      const wake = (): void => {
        if (this.received < octets && !this.socket.readableEnded) return;
        this.#wakes.delete(wake);
        resolve(this.received);
      };
      this.#wakes.add(wake);
      wake();
    });
  }
}

/**
 * Sends the pattern from `from` on, one octet a turn, so the proxy reads each on its own (one
 * read, one piece), as a hostile peer would send them: `count` of them, or fewer once the
 * socket refuses one (what follows would wait in this process, not the proxy). Returns how many went.
 */
async function trickle(socket: Socket, from: number, count: number): Promise<number> {
  for (let index = from; index < from + count; index++) {
    socket.write(Buffer.of(octetAt(index)));
    if (socket.writableLength > 0) return index + 1 - from;
    await nextTurn();
  }
  return count;
}

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), "rp-tunnel-octets-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function listening(t: Test, server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(() => server.close());
}

/** The accepted end (readable mark 1) and the connected end of a connection to a unix socket at `path`. */
async function socketPair(t: Test, path: string): Promise<[Socket, Socket]> {
  const accepted = deferred<Socket>();
  await listening(t, createServer({ highWaterMark: 1 }, (socket) => accepted.resolve(socket)), path);
  const connecting = connect(path);
  await new Promise((resolve) => connecting.once("connect", resolve));
  return [await accepted.promise, connecting];
}

/** An app on a unix socket that accepts the switch, then reads into a Receiver. */
async function startApp(t: Test, path: string): Promise<{ upgraded: Promise<Receiver> }> {
  const upgraded = deferred<Receiver>();
  const server = createServer({ highWaterMark: 1 }, (socket) => {
    t.teardown(() => socket.destroy());
    let head = "";
    const onHead = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onHead);
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
      upgraded.resolve(new Receiver(socket));
    };
    socket.on("data", onHead);
  });
  await listening(t, server, path);
  return { upgraded: upgraded.promise };
}

/** A client past its 101: the head read, nothing after it. */
async function upgradedClient(t: Test, port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  socket.setNoDelay(true);
  socket.write("GET /ws HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  let head = "";
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    const onData = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      resolve();
    };
    socket.on("data", onData);
  });
  if (!head.startsWith("HTTP/1.1 101 ")) throw new Error(`no switch: ${head}`);
  return socket;
}

t.test("a client's 1-octet pieces to an app that does not read: held by octets, then all delivered in order (issue 52)", async (t) => {
  const dir = tempDir(t);
  const { upgraded } = await startApp(t, join(dir, "app.sock"));
  const daemon = await startTestDaemon(t, ["--upstream", `unix:${join(dir, "app.sock")}`]);
  const client = await upgradedClient(t, daemon.port);
  const app = await upgraded;

  t.equal(await trickle(client, 0, WARM_UP), WARM_UP);
  t.equal(await app.until(WARM_UP), WARM_UP, "the app reads what comes");
  app.socket.pause();
  const before = heldAfterGc();
  const started = Date.now();
  // TCP from the client takes in megabytes of 1-octet writes: all of them go, the proxy reads what it will.
  t.equal(await trickle(client, WARM_UP, OCTETS), OCTETS);
  const growth = heldAfterGc() - before;
  t.comment(`${OCTETS} octets in 1-octet writes (${Date.now() - started} ms) to an app that does not read: the heap grew ${mib(growth)} (${(growth / OCTETS).toFixed(1)} bytes per octet)`);
  t.ok(growth < BOUND, `grew ${mib(growth)}, under ${mib(BOUND)}`);

  app.socket.resume();
  t.equal(await app.until(WARM_UP + OCTETS), WARM_UP + OCTETS, "every octet reached the app once it read");
  t.equal(app.misplaced, -1, "in order");
  client.end();
  await new Promise<void>((resolve) => (app.socket.readableEnded ? resolve() : app.socket.once("end", resolve)));
  t.pass("the client's end reached the app after them");
});

t.test("both ways at once on the tunnel's own sockets: 1-octet pieces each way, neither peer reads (issue 52)", async (t) => {
  const dir = tempDir(t);
  // Unix sockets both sides, so each hop takes in only a few hundred writes: the tunnel is what
  // holds the rest. Each peer is the accepting end (its readable mark 1, see Receiver).
  const [clientPeer, client] = await socketPair(t, join(dir, "client.sock"));
  const [appPeer, upstream] = await socketPair(t, join(dir, "app.sock"));
  for (const socket of [clientPeer, upstream, client, appPeer]) t.teardown(() => socket.destroy());
  const closed = deferred();
  const faults: unknown[] = [];
  openTunnel(client, upstream, Buffer.alloc(0), Buffer.alloc(0), NO_PROXY_OBSERVER, () => closed.resolve(), (error) => faults.push(error));
  const atApp = new Receiver(appPeer);
  const atClient = new Receiver(clientPeer);

  const [up, down] = await Promise.all([trickle(clientPeer, 0, WARM_UP), trickle(appPeer, 0, WARM_UP)]);
  t.same([up, down], [WARM_UP, WARM_UP]);
  t.same([await atApp.until(WARM_UP), await atClient.until(WARM_UP)], [WARM_UP, WARM_UP], "each peer reads what comes");
  appPeer.pause();
  clientPeer.pause();
  const before = heldAfterGc();
  // Each peer sends until the tunnel stops reading it (its socket refuses), at most OCTETS.
  const sent = await Promise.all([trickle(clientPeer, WARM_UP, OCTETS), trickle(appPeer, WARM_UP, OCTETS)]);
  const growth = heldAfterGc() - before;
  t.comment(`${sent.join(" and ")} octets in 1-octet writes each way: the heap grew ${mib(growth)} (${(growth / (sent[0] + sent[1])).toFixed(1)} bytes per octet)`);
  t.ok(sent.every((octets) => octets > TUNNEL_WAIT_BOUND), "each way held its bound before it stopped reading");
  t.ok(growth < BOUND, `grew ${mib(growth)}, under ${mib(BOUND)}`);

  appPeer.resume();
  clientPeer.resume();
  const [upRest, downRest] = await Promise.all([trickle(clientPeer, WARM_UP + sent[0], 1024), trickle(appPeer, WARM_UP + sent[1], 1024)]);
  const up2 = WARM_UP + sent[0] + upRest;
  const down2 = WARM_UP + sent[1] + downRest;
  t.same([await atApp.until(up2), await atClient.until(down2)], [up2, down2], "every octet went through once the peers read");
  t.same([atApp.misplaced, atClient.misplaced], [-1, -1], "in order");
  // Half-close as before: the client's end reaches the app, the app's the client, and the tunnel is gone.
  clientPeer.end();
  appPeer.end();
  await Promise.all([atApp.until(Infinity), atClient.until(Infinity)]);
  await closed.promise;
  t.same(faults, []);
});
