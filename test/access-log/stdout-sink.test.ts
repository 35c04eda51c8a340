// Which stdout gets the pipe sink: a FIFO is reopened as a non-blocking description of the process's own (the original's flags untouched); a file, a character device, a socket or no /proc keep sonic-boom.
import { closeSync, constants, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, connect, type Socket } from "node:net";
import { join } from "node:path";
import t from "tap";
import { PipeSink } from "../../src/access-log/pipe-sink.js";
import { openStdoutDestinations, OWN_STDOUT_CHUNK_BYTES, PIPE_BUF, reopenPipeNonBlocking } from "../../src/access-log/stdout-sink.js";
import { fdFlags, makeFifo, O_NONBLOCK } from "../helpers/fifo.js";

t.test("a FIFO: a new descriptor on the same pipe, non-blocking, while the one given stays blocking", async (t) => {
  const fifo = makeFifo(t);
  const own = reopenPipeNonBlocking(fifo.writeFd, "/proc/self/fd");
  if (own === undefined) return t.fail("not reopened");
  t.teardown(() => closeSync(own));
  t.not(own, fifo.writeFd);
  t.equal(fstatSync(own).ino, fstatSync(fifo.writeFd).ino, "the same pipe");
  t.equal(fdFlags("self", own) & O_NONBLOCK, O_NONBLOCK, "ours is non-blocking");
  t.equal(fdFlags("self", fifo.writeFd) & O_NONBLOCK, 0, "the shared one is not: an app writing to it still blocks instead of failing with EAGAIN");
  t.equal(fdFlags("self", own) & 0o3, constants.O_WRONLY, "opened for writing only (O_ACCMODE)");
});

t.test("openStdoutDestinations: the pipe sink for a FIFO (both kinds of line), the fallback for anything else", async (t) => {
  const fifo = makeFifo(t);
  const onFifo = openStdoutDestinations({}, { fd: fifo.writeFd });
  t.ok(onFifo.openAccessSink() instanceof PipeSink);
  onFifo.lifecycle.write('{"msg":"lifecycle"}\n');
  await onFifo.end(1_000);
  const read = Buffer.alloc(64);
  t.equal(read.toString("utf8", 0, readSync(fifo.readFd, read)), '{"msg":"lifecycle"}\n', "a lifecycle line through the same pipe");
  const path = join(t.testdir(), "stdout.log");
  const file = openSync(path, "w");
  t.equal(reopenPipeNonBlocking(file, "/proc/self/fd"), undefined, "a file: its writes never wait on a reader");
  const onFile = openStdoutDestinations({}, { fd: file });
  t.notOk(onFile.openAccessSink() instanceof PipeSink, "sonic-boom");
  onFile.openAccessSink().write(Buffer.from("a line\n"));
  await onFile.end(1_000);
  t.equal(readFileSync(path, "utf8"), "a line\n", "written to that descriptor (and closed by the end)");
  const devNull = openSync("/dev/null", "w");
  t.teardown(() => closeSync(devNull));
  t.equal(reopenPipeNonBlocking(devNull, "/proc/self/fd"), undefined, "a character device");
  t.equal(reopenPipeNonBlocking(fifo.writeFd, join(t.testdir(), "no-proc")), undefined, "no /proc: nothing to reopen");
  t.equal(reopenPipeNonBlocking(987_654, "/proc/self/fd"), undefined, "a descriptor that is not open");
});

t.test("access chunks: 64 KiB on a pipe of our own (fewer wake-ups of its reader), PIPE_BUF where the app shares it or sonic-boom writes", async (t) => {
  const fifo = makeFifo(t);
  const own = openStdoutDestinations({}, { fd: fifo.writeFd });
  t.equal(own.maxChunkBytes, OWN_STDOUT_CHUNK_BYTES, "the sidecar form's pipe");
  await own.end(1_000);
  const shared = openStdoutDestinations({}, { fd: fifo.writeFd, sharedWithApp: true });
  t.equal(shared.maxChunkBytes, PIPE_BUF, "shared with the app: each write(2) atomic");
  await shared.end(1_000);
  const file = openSync(join(t.testdir(), "stdout.log"), "w");
  const onFile = openStdoutDestinations({}, { fd: file });
  t.equal(onFile.maxChunkBytes, PIPE_BUF, "a file (sonic-boom)");
  await onFile.end(1_000);
});

t.test("a socket (a Node parent's stdio, systemd's journal) keeps the fallback: /proc cannot reopen one (ENXIO), and O_NONBLOCK on it would be the app's too", async (t) => {
  // Not in t.testdir(): a socket's path is limited to 107 bytes.
  const dir = mkdtempSync(join(tmpdir(), "stdout-sink-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "stdout.sock");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const client = connect(path);
  await new Promise((resolve) => client.once("connect", resolve));
  t.teardown(async () => {
    client.destroy();
    (await accepted).destroy();
    server.close();
  });
  // The only way to a socket's descriptor number is the handle's; a test may read it.
  const fd = (client as unknown as { _handle: { fd: number } })._handle.fd;
  t.ok(fstatSync(fd).isSocket());
  t.equal(reopenPipeNonBlocking(fd, "/proc/self/fd"), undefined);
});
