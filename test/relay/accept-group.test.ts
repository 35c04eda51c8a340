// The relay's listener as the kernel sees it: one port, LISTENING_SOCKETS sockets joined by SO_REUSEPORT, connections spread over them, and a port someone else holds still refused.
import { readFileSync } from "node:fs";
import { createConnection, Server, type AddressInfo, type Socket } from "node:net";
import t from "tap";
import { parseTcpTable } from "../../src/procfs/tcp-table.js";
import type { ListenAddress } from "../../src/config/listen-address.js";
import { AcceptGroup, LISTENING_SOCKETS, runtimeSetsReusePort } from "../../src/relay/accept-group.js";
import { listenOn, type SocketOptions } from "../../src/relay/listen-socket.js";

/** LISTEN sockets on `port` in this network namespace's /proc/net/tcp, as the daemon's own parser reads them (a row each). */
function listeningSockets(port: number): number {
  const table = parseTcpTable(readFileSync("/proc/net/tcp"));
  if (!table.readable) throw new Error(`/proc/net/tcp: ${table.reason}`);
  return table.listenAddresses.get(port)?.length ?? 0;
}

function closed(group: AcceptGroup): Promise<void> {
  return new Promise((resolve) => group.close(resolve));
}

t.test("the runtimes that set SO_REUSEPORT, and the one the tests run on", async (t) => {
  t.strictSame(["20.19.0", "22.11.0", "22.12.0", "23.0.0", "23.1.0", "24.0.0", "26.2.1"].map((version) => runtimeSetsReusePort(version)), [false, false, true, false, true, true, true]);
  t.ok(runtimeSetsReusePort(), "the embedded runtime does: the rest of this file needs it");
});

t.test("one port, every socket listening on it in the kernel", async (t) => {
  const group = new AcceptGroup((socket) => socket.destroy());
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  t.teardown(() => closed(group));
  t.equal(await group.rest, LISTENING_SOCKETS);
  t.equal(group.servers.length, LISTENING_SOCKETS);
  t.ok(group.servers.every((server) => (server.address() as AddressInfo).port === port), "port 0 resolved once, for all");
  t.equal(listeningSockets(port), LISTENING_SOCKETS);
});

t.test("connections are spread over the sockets, each handed to the one handler", async (t) => {
  const accepted: Socket[] = [];
  let allAccepted!: () => void;
  const everyOne = new Promise<void>((resolve) => (allAccepted = resolve));
  const group = new AcceptGroup((socket) => accepted.push(socket) === 64 && allAccepted());
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  await group.rest;
  const perSocket = group.servers.map(() => 0);
  group.servers.forEach((server, index) => server.on("connection", () => perSocket[index]!++));
  const clients = await Promise.all(
    Array.from({ length: 64 }, () => new Promise<Socket>((resolve) => { const client = createConnection(port, "127.0.0.1", () => resolve(client)); })),
  );
  await everyOne;
  t.equal(accepted.length, clients.length, "every connection reached the handler");
  t.ok(perSocket.filter((count) => count > 0).length > 1, `more than one socket accepted (${perSocket.join(" ")})`);
  for (const socket of [...clients, ...accepted]) socket.destroy();
  await closed(group);
  t.equal(listeningSockets(port), 0, "done once every socket has closed");
});

t.test("a port another socket holds is refused as before, and nothing is left bound", async (t) => {
  const holder = new Server();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  t.teardown(() => holder.close());
  const { port } = holder.address() as AddressInfo;
  const group = new AcceptGroup((socket) => socket.destroy());
  await t.rejects(group.listen({ host: "127.0.0.1", port }), { message: `cannot listen on 127.0.0.1:${port}: address already in use` });
  t.ok(group.servers.every((server) => !server.listening));
  t.equal(listeningSockets(port), 1, "only the holder's");
});

t.test("a second group on the same port (a second readiness-proxy) is refused, not joined", async (t) => {
  const first = new AcceptGroup((socket) => socket.destroy());
  const { port } = await first.listen({ host: "127.0.0.1", port: 0 });
  await first.rest;
  t.teardown(() => closed(first));
  const second = new AcceptGroup((socket) => socket.destroy());
  await t.rejects(second.listen({ host: "127.0.0.1", port }), { message: `cannot listen on 127.0.0.1:${port}: address already in use` });
  t.equal(listeningSockets(port), LISTENING_SOCKETS);
});

t.test("only the group's own sockets ever listen: none listens for a moment and closes, which reset a client that connected then", async (t) => {
  const free = new Server();
  const { port } = await new Promise<AddressInfo>((resolve) => free.listen(0, "127.0.0.1", () => resolve(free.address() as AddressInfo)));
  await new Promise((resolve) => free.close(resolve));
  const listened: Server[] = [];
  const original = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    listened.push(this);
    return (original as (...rest: unknown[]) => Server).apply(this, args);
  } as typeof original;
  t.teardown(() => {
    Server.prototype.listen = original;
  });
  for (const address of [{ host: "127.0.0.1", port: 0 }, { host: "127.0.0.1", port }]) {
    listened.length = 0;
    const group = new AcceptGroup((socket) => socket.destroy());
    await group.listen(address);
    await group.rest;
    t.equal(listened.length, LISTENING_SOCKETS, `port ${address.port}: one listen per socket of the group`);
    t.ok(listened.every((server) => group.servers.includes(server)), `port ${address.port}: and no other socket`);
    await closed(group);
  }
});

t.test("without a BoundSocket (the fallback's probe, a connection): a second group on the same port is still refused", async (t) => {
  const first = new AcceptGroup((socket) => socket.destroy(), { boundSocket: null });
  const { port } = await first.listen({ host: "127.0.0.1", port: 0 });
  t.equal(await first.rest, LISTENING_SOCKETS);
  t.teardown(() => closed(first));
  const second = new AcceptGroup((socket) => socket.destroy(), { boundSocket: null });
  await t.rejects(second.listen({ host: "127.0.0.1", port }), { message: `cannot listen on 127.0.0.1:${port}: address already in use` });
  const wildcard = new AcceptGroup((socket) => socket.destroy());
  await t.rejects(wildcard.listen({ host: undefined, port }), { message: `cannot listen on :${port}: address already in use` }, "every address: the kernel's bind refuses it too");
});

/** Sockets after the first listen only when the test lets them: `held` resolves at each one asked for. */
function holdingTheRest() {
  let calls = 0;
  let letGo = false;
  const waiting: (() => void)[] = [];
  let asked!: () => void;
  const held = new Promise<void>((resolve) => (asked = resolve));
  const listenSocket = (server: Server, address: ListenAddress, options: SocketOptions) => {
    if (calls++ === 0 || letGo) return listenOn(server, address, options);
    asked();
    return new Promise<AddressInfo | undefined>((resolve) => waiting.push(() => resolve(listenOn(server, address, options))));
  };
  const release = () => {
    letGo = true;
    for (const go of waiting.splice(0)) go();
  };
  return { listenSocket, held, release };
}

t.test("listen() resolves, and the first socket accepts, while the others are still to be bound", async (t) => {
  const rest = holdingTheRest();
  let accepted!: () => void;
  const acceptedOne = new Promise<void>((resolve) => (accepted = resolve));
  const group = new AcceptGroup((socket) => { socket.destroy(); accepted(); }, { listenSocket: rest.listenSocket });
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  t.teardown(() => closed(group));
  await rest.held;
  t.equal(listeningSockets(port), 1, "one socket listens; the second is held");
  const client = createConnection(port, "127.0.0.1");
  client.on("error", () => {});
  await acceptedOne;
  t.pass("a client was accepted while 15 were not bound yet");
  rest.release();
  t.equal(await group.rest, LISTENING_SOCKETS);
  t.equal(listeningSockets(port), LISTENING_SOCKETS);
});

t.test("a close while the others are being bound closes every one, those bound after it too", async (t) => {
  const rest = holdingTheRest();
  const group = new AcceptGroup((socket) => socket.destroy(), { listenSocket: rest.listenSocket });
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  await rest.held;
  let done = false;
  const closing = new Promise<void>((resolve) => group.close(() => { done = true; resolve(); }));
  t.equal(listeningSockets(port), 0, "the first stopped at once");
  // The held listen now goes ahead, after the close: the group closes what it opened.
  rest.release();
  await closing;
  t.ok(done);
  t.equal(listeningSockets(port), 0, "nothing left listening");
  t.ok(group.servers.every((server) => !server.listening));
  t.equal(await group.rest, 1, "no socket after the close was counted");
});

t.test("a later socket that cannot listen: the group accepts on those that do, and says so once", async (t) => {
  let calls = 0;
  const told: [unknown, number, number][] = [];
  const group = new AcceptGroup((socket) => socket.destroy(), {
    listenSocket: (server, address, options) => (++calls === 5 ? Promise.reject(Object.assign(new Error("too many open files"), { code: "EMFILE" })) : listenOn(server, address, options)),
    onFewerSockets: (error, listening, wanted) => told.push([error, listening, wanted]),
  });
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  t.equal(await group.rest, 4);
  t.equal(listeningSockets(port), 4);
  t.equal(told.length, 1);
  t.match(told[0], [{ code: "EMFILE" }, 4, LISTENING_SOCKETS]);
  await closed(group);
  t.equal(listeningSockets(port), 0);
});

t.test("a private relay's group: one socket, no SO_REUSEPORT", async (t) => {
  const group = new AcceptGroup((socket) => socket.destroy(), { count: 1 });
  const { port } = await group.listen({ host: "127.0.0.1", port: 0 });
  t.equal(await group.rest, 1, "nothing after the first");
  t.equal(listeningSockets(port), 1);
  const joiner = new AcceptGroup((socket) => socket.destroy(), { count: 1 });
  await t.rejects(joiner.listen({ host: "127.0.0.1", port }), { message: `cannot listen on 127.0.0.1:${port}: address already in use` });
  await closed(group);
});
