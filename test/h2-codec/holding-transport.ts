// A transport for ConnectionOutput tests: keeps every chunk written, by reference and as a copy of what it held then.
import type { H2Transport } from "../../src/h2-codec/connection-output.js";

/** Keeps every chunk by reference, as a socket does until the kernel has it, with a copy of what it held when written. */
export class HoldingTransport implements H2Transport {
  writableLength = 0;
  readonly written: { chunk: Buffer; copy: Buffer }[] = [];
  write(chunk: Buffer): boolean {
    this.written.push({ chunk, copy: Buffer.from(chunk) });
    return true;
  }
  cork(): void {}
  uncork(): void {}
  pause(): void {}
  resume(): void {}
  end(): void {}
  destroy(): void {}
}
