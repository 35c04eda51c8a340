// Reads <procRoot>/net/tcp and net/tcp6 asynchronously and reports the LISTEN ports, and their addresses, of the readable tables.
import { close, open, read } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { errorCode } from "../errors.js";
import { TcpTableParser } from "./tcp-table.js";

/** The two tables of a network namespace, in the order they are read. */
export const SOCKET_TABLES = ["tcp", "tcp6"] as const;
export type SocketTable = (typeof SOCKET_TABLES)[number];

/** Why one table could not be used; its ports do not count. */
export interface UnreadableTable {
  readonly table: SocketTable;
  /** The read error's code and message, or what in the text was not the kernel's format. */
  readonly error: string;
}

/** What one scan saw. */
export interface ListenerScan {
  /** Local ports in LISTEN state in the readable tables. */
  readonly listeningPorts: ReadonlySet<number>;
  /**
   * Per LISTEN port, the local addresses of both tables (`0.0.0.0`, `::`, `::1`, ...): what an
   * address-bound check reads. Absent where a scan does not record them (test doubles): then no
   * address counts.
   */
  readonly listenAddresses?: ReadonlyMap<number, readonly string[]>;
  readonly unreadableTables: readonly UnreadableTable[];
}

/**
 * Streams one file's bytes to `onChunk` until the end of the file or until `onChunk` returns
 * false (the rest decides nothing); rejects with the fs error (its `code` is read).
 */
export type TableReader = (path: string, onChunk: (chunk: Buffer) => boolean | void) => Promise<void>;

/** /proc files report size 0, so they are read in a loop; 64 KiB holds ~400 rows per read. */
const READ_BUFFER_BYTES = 64 * 1024;
/**
 * The first read asks for less: the kernel prints only what a read asks for (`seq_file`), and
 * a pod's LISTEN rows, which come first, fit in a few KiB, so a table of 100,000 connections
 * costs one small read. A pod with more listeners reads on at the full size.
 */
const FIRST_READ_BYTES = 4 * 1024;

/**
 * Makes the default reader: one reused buffer, filled by asynchronous reads until EOF.
 * Reusing it matters: touching fresh pages costs more than parsing them. The scan is
 * single-flight (see CachedCheck), and the two tables are read one after the other, so
 * one buffer is never filled by two reads at once. node:fs's callbacks, promisified, rather
 * than node:fs/promises: the same reads on the thread pool and the same errors, but
 * fs/promises (with readline and the REPL's history module behind it) is ~2.7 ms to load,
 * and the first check runs right after the listener opens, before the first /health is served.
 */
export function createFileTableReader(): TableReader {
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const openFile = promisify(open);
  const readFile = promisify(read);
  const closeFile = promisify(close);
  return async (path, onChunk) => {
    const fd = await openFile(path, "r");
    try {
      for (let size = FIRST_READ_BYTES; ; size = buffer.length) {
        const { bytesRead } = await readFile(fd, buffer, 0, size, null);
        if (bytesRead === 0 || onChunk(buffer.subarray(0, bytesRead)) === false) return;
      }
    } finally {
      await closeFile(fd);
    }
  };
}

export interface ListenerScannerOptions {
  /** Directory holding `net/tcp` and `net/tcp6`; `/proc` in production. */
  readonly procRoot: string;
  /** Injected in tests to count reads or fail them. */
  readonly readTable?: TableReader;
}

/** Scans the socket tables of the network namespace seen under `procRoot`. */
export class ListenerScanner {
  readonly #paths: ReadonlyMap<SocketTable, string>;
  readonly #readTable: TableReader;

  constructor(options: ListenerScannerOptions) {
    this.#paths = new Map(SOCKET_TABLES.map((table) => [table, join(options.procRoot, "net", table)]));
    this.#readTable = options.readTable ?? createFileTableReader();
  }

  /** Reads both tables. Never rejects for a table problem: those come back in `unreadableTables`. */
  async scan(): Promise<ListenerScan> {
    const listeningPorts = new Set<number>();
    const listenAddresses = new Map<number, string[]>();
    const unreadableTables: UnreadableTable[] = [];
    for (const table of SOCKET_TABLES) {
      const outcome = await this.#scanTable(table);
      if (typeof outcome === "string") {
        unreadableTables.push({ table, error: outcome });
        continue;
      }
      for (const [port, addresses] of outcome) {
        listeningPorts.add(port);
        listenAddresses.set(port, [...(listenAddresses.get(port) ?? []), ...addresses]);
      }
    }
    return { listeningPorts, listenAddresses, unreadableTables };
  }

  /** The table's LISTEN ports with their addresses, or why it is unreadable. */
  async #scanTable(table: SocketTable): Promise<ReadonlyMap<number, readonly string[]> | string> {
    const parser = new TcpTableParser();
    try {
      await this.#readTable(this.#paths.get(table)!, (chunk) => parser.push(chunk));
    } catch (error) {
      // A kernel booted with ipv6.disable=1 has no tcp6: that is an empty table, not a failure.
      if (table === "tcp6" && errorCode(error) === "ENOENT") return new Map();
      return describeReadError(error);
    }
    const parsed = parser.finish();
    return parsed.readable ? parsed.listenAddresses : parsed.reason;
  }
}

function describeReadError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
