// A named pipe for a test (a container runtime's stdout is one): made in a temporary directory, read when and as fast as the test says, and the descriptors a process holds on it.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { Socket } from "node:net";
import { join } from "node:path";
import type { Test } from "tap";

/** Linux's O_NONBLOCK, as /proc/<pid>/fdinfo/<fd> prints flags (octal). */
export const O_NONBLOCK = 0o4000;

export interface Fifo {
  readonly path: string;
  /** The write end, blocking (as a container runtime's), to give a child as stdout; close it after the spawn with closeWriteEnd(). */
  readonly writeFd: number;
  closeWriteEnd(): void;
  /** A read end opened with the FIFO, so that a writer never sees ENXIO or EPIPE; nothing reads it until read(). */
  readonly readFd: number;
  /** Another read end, not read: while it is open the pipe has a reader, and one that takes nothing (a stuck log collector). */
  openReadEnd(): number;
  /** Reads `fd` (one of the read ends) from now on; destroying the socket closes it. */
  read(fd: number): Socket;
}

/** A FIFO in a directory of its own (t.testdir() would empty the test's), removed with every descriptor it opened at the test's end. */
export function makeFifo(t: Test): Fifo {
  const dir = mkdtempSync(join(tmpdir(), "fifo-"));
  const path = join(dir, "stdout.fifo");
  execFileSync("mkfifo", [path]);
  // The read end first, non-blocking (a FIFO's open for writing waits for a reader).
  const openReadEnd = () => openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const readFd = openReadEnd();
  const writeFd = openSync(path, constants.O_WRONLY);
  let writeOpen = true;
  const unread = new Set([readFd]);
  const sockets: Socket[] = [];
  const closeWriteEnd = () => {
    if (writeOpen) closeSync(writeFd);
    writeOpen = false;
  };
  t.teardown(() => {
    closeWriteEnd();
    for (const socket of sockets) socket.destroy();
    for (const fd of unread) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    path,
    writeFd,
    closeWriteEnd,
    readFd,
    openReadEnd() {
      const fd = openReadEnd();
      unread.add(fd);
      return fd;
    },
    read(fd) {
      unread.delete(fd);
      const socket = new Socket({ fd, readable: true, writable: false });
      sockets.push(socket);
      return socket;
    },
  };
}

/** Collects what `socket` reads as whole lines; `untilLine` resolves with the first line that matches. */
export function lineReader(socket: Socket) {
  const lines: string[] = [];
  const waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  let pending = "";
  socket.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((entry) => entry.match(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const ended = new Promise<void>((resolve) => socket.once("end", resolve));
  return {
    lines,
    /** Bytes after the last newline: a torn line if any at the end. */
    rest: () => pending,
    ended,
    untilLine(match: (line: string) => boolean): Promise<string> {
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

/** The descriptors of process `pid` that are open on what its `fd` is open on (the same pipe, file or socket), `fd` included. */
export function descriptorsLike(pid: number, fd: number): number[] {
  const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
  return readdirSync(`/proc/${pid}/fd`)
    .map(Number)
    .filter((other) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${other}`) === target;
      } catch {
        return false; // closed since the listing
      }
    });
}

/** The file status flags of `pid`'s `fd` (its open file description's), from /proc. */
export function fdFlags(pid: number | "self", fd: number): number {
  const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))?.[1];
  if (flags === undefined) throw new Error(`no flags in /proc/${pid}/fdinfo/${fd}`);
  return Number.parseInt(flags, 8);
}
