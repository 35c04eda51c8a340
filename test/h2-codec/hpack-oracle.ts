// One python3-hpack process per test file as a reference HPACK codec, asked over JSON lines (test/h2-codec/hpack-oracle.py).
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";

/** What the reference answers to a decode: the list, or the error it raised. */
export interface OracleDecoded {
  readonly fields?: string[];
  readonly never?: number[];
  readonly tableSize?: number;
  readonly error?: string;
}

const SCRIPT = new URL("./hpack-oracle.py", import.meta.url).pathname;

/** A python3 that imports hpack: Debian's (/usr/bin/python3) first, as python3-hpack installs there; else the PATH's. */
function findPython(): string | undefined {
  for (const python of ["/usr/bin/python3", "python3"]) {
    if (python.startsWith("/") && !existsSync(python)) continue;
    if (spawnSync(python, ["-c", "import hpack"], { stdio: "ignore" }).status === 0) return python;
  }
  return undefined;
}

/**
 * The reason the reference is missing, after trying `apt-get install -y python3-hpack` once (as
 * root), or undefined when a python3 with hpack is there.
 */
export function pythonHpack(): { python?: string; missing?: string } {
  let python = findPython();
  if (python === undefined && process.getuid?.() === 0) {
    spawnSync("apt-get", ["install", "-y", "-qq", "python3-hpack"], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    python = findPython();
  }
  return python === undefined ? { missing: "python3-hpack is not installed and `apt-get install -y python3-hpack` did not install it" } : { python };
}

/** The reference process: requests answered in order, one line each. */
export class HpackOracle {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((reply: Record<string, unknown>) => void)[] = [];
  private nextId = 0;

  constructor(python: string) {
    this.child = spawn(python, [SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    createInterface({ input: this.child.stdout }).on("line", (line) => this.waiting.shift()?.(JSON.parse(line) as Record<string, unknown>));
  }

  /** Sends one request and waits for its answer; a crash inside the reference is thrown. */
  async ask(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reply = await new Promise<Record<string, unknown>>((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(JSON.stringify(request) + "\n");
    });
    if (reply.crash !== undefined) throw new Error(`python3-hpack crashed: ${String(reply.crash)}`);
    return reply;
  }

  /** A new pair of reference tables (an encoder and a decoder, 4,096 each); returns its id. */
  async open(): Promise<number> {
    const id = this.nextId++;
    await this.ask({ op: "new", id });
    return id;
  }

  async close(id: number): Promise<void> {
    await this.ask({ op: "drop", id });
  }

  /** The reference's block for `fields`, and its table size after. */
  async encode(id: number, fields: readonly string[], huffman: boolean, never: readonly number[] = []): Promise<{ block: Buffer; tableSize: number }> {
    const reply = await this.ask({ op: "encode", id, fields, huffman, never });
    return { block: Buffer.from(reply.hex as string, "hex"), tableSize: reply.tableSize as number };
  }

  async decode(id: number, block: Uint8Array): Promise<OracleDecoded> {
    return (await this.ask({ op: "decode", id, hex: Buffer.from(block).toString("hex") })) as OracleDecoded;
  }

  /** Tells the reference decoder our SETTINGS_HEADER_TABLE_SIZE was acknowledged. */
  async setting(id: number, size: number): Promise<void> {
    await this.ask({ op: "setting", id, size });
  }

  /** Tells the reference encoder the peer's SETTINGS_HEADER_TABLE_SIZE. */
  async peerSetting(id: number, size: number): Promise<void> {
    await this.ask({ op: "peer-setting", id, size });
  }

  stop(): void {
    this.child.stdin.end();
  }
}
