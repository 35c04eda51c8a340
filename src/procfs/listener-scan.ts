// Reads the socket tables under <procRoot>/net that the required kinds need (tcp, tcp6; udp, udp6; unix) asynchronously and reports what listens in the readable ones.
import { close, open, read } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { errorCode } from "../errors.js";
import type { ListenerKind } from "../config/listener-specs.js";
import { TcpTableParser } from "./tcp-table.js";
import { UdpTableParser } from "./udp-table.js";
import { UnixTableParser } from "./unix-table.js";

/** Every table a scan may read, in the order they are read. */
export const SOCKET_TABLES = ["tcp", "tcp6", "udp", "udp6", "unix"] as const;
export type SocketTable = (typeof SOCKET_TABLES)[number];
/** The TCP tables: what a scan reads when only TCP ports are required. */
export const TCP_TABLES: readonly SocketTable[] = ["tcp", "tcp6"];

/** The tables of each kind; an IPv6 table that does not exist (ipv6.disable=1) is empty. */
export const KIND_TABLES: Readonly<Record<ListenerKind, readonly SocketTable[]>> = { tcp: ["tcp", "tcp6"], udp: ["udp", "udp6"], unix: ["unix"] };

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
  /** Bound UDP ports (any state) of the readable UDP tables; absent when no UDP listener is required. */
  readonly boundUdpPorts?: ReadonlySet<number>;
  /** Paths of listening unix stream sockets (`@name` for abstract); absent when no unix listener is required. */
  readonly listeningUnixPaths?: ReadonlySet<string>;
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
  /** Directory holding `net/tcp`, `net/tcp6`, ...; `/proc` in production. */
  readonly procRoot: string;
  /** The kinds required listeners have; a table no kind needs is never read. Default: TCP only. */
  readonly kinds?: readonly ListenerKind[];
  /** The unix paths the checks ask about: only they are recorded. Default: every listening path. */
  readonly unixPaths?: readonly string[];
  /** Injected in tests to count reads or fail them. */
  readonly readTable?: TableReader;
}

/** Scans the socket tables of the network namespace seen under `procRoot`. */
export class ListenerScanner {
  readonly #procRoot: string;
  readonly #tables: readonly SocketTable[];
  readonly #readTable: TableReader;
  readonly #unixPaths: readonly string[] | undefined;

  constructor(options: ListenerScannerOptions) {
    this.#procRoot = options.procRoot;
    this.#unixPaths = options.unixPaths;
    const kinds = new Set<ListenerKind>(options.kinds ?? ["tcp"]);
    this.#tables = SOCKET_TABLES.filter((table) => [...kinds].some((kind) => KIND_TABLES[kind].includes(table)));
    this.#readTable = options.readTable ?? createFileTableReader();
  }

  /** The tables a scan reads. */
  get tables(): readonly SocketTable[] {
    return this.#tables;
  }

  /** Reads the needed tables one after the other. Never rejects for a table problem: those come back in `unreadableTables`. */
  async scan(): Promise<ListenerScan> {
    const listeningPorts = new Set<number>();
    const listenAddresses = new Map<number, string[]>();
    const boundUdpPorts = new Set<number>();
    const listeningUnixPaths = new Set<string>();
    const unreadableTables: UnreadableTable[] = [];
    for (const table of this.#tables) {
      const outcome = await this.#scanTable(table);
      if (typeof outcome === "string") {
        unreadableTables.push({ table, error: outcome });
      } else if ("paths" in outcome) {
        for (const path of outcome.paths) listeningUnixPaths.add(path);
      } else if ("ports" in outcome) {
        for (const port of outcome.ports) boundUdpPorts.add(port);
      } else {
        for (const [port, addresses] of outcome.addresses) {
          listeningPorts.add(port);
          listenAddresses.set(port, [...(listenAddresses.get(port) ?? []), ...addresses]);
        }
      }
    }
    return {
      listeningPorts,
      listenAddresses,
      unreadableTables,
      ...(this.#tables.includes("udp") && { boundUdpPorts }),
      ...(this.#tables.includes("unix") && { listeningUnixPaths }),
    };
  }

  /** The table's ports with their addresses (unix: its listening paths), or why it is unreadable. */
  async #scanTable(
    table: SocketTable,
  ): Promise<{ readonly addresses: ReadonlyMap<number, readonly string[]> } | { readonly ports: ReadonlySet<number> } | { readonly paths: ReadonlySet<string> } | string> {
    const parser = table === "unix" ? new UnixTableParser(this.#unixPaths) : table === "udp" || table === "udp6" ? new UdpTableParser() : new TcpTableParser();
    try {
      await this.#readTable(join(this.#procRoot, "net", table), (chunk) => parser.push(chunk));
    } catch (error) {
      // A kernel booted with ipv6.disable=1 has no tcp6 or udp6: that is an empty table, not a failure.
      if (table.endsWith("6") && errorCode(error) === "ENOENT") return { addresses: new Map() };
      return describeReadError(error);
    }
    const parsed = parser.finish();
    if (!parsed.readable) return parsed.reason;
    if ("listeningPaths" in parsed) return { paths: parsed.listeningPaths };
    return table === "udp" || table === "udp6" ? { ports: parsed.listeningPorts } : { addresses: parsed.listenAddresses };
  }
}

function describeReadError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
