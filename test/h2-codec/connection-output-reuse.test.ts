// A connection's output buffer is written from its start again once the socket has taken every octet, and never while the socket still holds some.
import t from "tap";
import { ConnectionOutput } from "../../src/h2-codec/connection-output.js";
import { HoldingTransport } from "./holding-transport.js";

function outputOn(transport: HoldingTransport): ConnectionOutput {
  return new ConnectionOutput(transport, { endedLocally: () => {}, writable: () => {} });
}

t.test("a socket that took everything: the next turn's frames go in the same memory, nothing allocated", async (t) => {
  const transport = new HoldingTransport();
  const output = outputOn(transport);
  for (let turn = 0; turn < 5000; turn++) {
    output.writer.ping(Buffer.alloc(8, turn & 0xff), false);
    output.writer.windowUpdate(0, 1 + turn);
    output.flush();
  }
  const first = transport.written[0]!.chunk;
  t.equal(transport.written.length, 5000);
  t.ok(
    transport.written.every(({ chunk }) => chunk.buffer === first.buffer && chunk.byteOffset === first.byteOffset),
    "every turn's frames were written from the start of one buffer (5,000 turns of 30 octets: 2.3 times its 64 KiB)",
  );
  t.ok(transport.written.at(-1)!.chunk.equals(transport.written.at(-1)!.copy));
});

t.test("while the socket still holds octets, none of them is written over", async (t) => {
  const transport = new HoldingTransport();
  const output = outputOn(transport);
  transport.writableLength = 1; // an earlier write not yet taken by the kernel
  for (let turn = 0; turn < 5000; turn++) {
    output.writer.ping(Buffer.alloc(8, turn & 0xff), false);
    output.flush();
  }
  t.ok(transport.written.every(({ chunk, copy }) => chunk.equals(copy)), "every chunk the socket holds still holds what was written");
  t.ok(new Set(transport.written.map(({ chunk }) => chunk.buffer)).size > 1, "new buffers were taken as the old ones filled");

  transport.writableLength = 0; // the kernel took it all: from here the memory may be written over
  output.flush();
  output.writer.ping(Buffer.alloc(8, 0xaa), true);
  output.flush();
  const last = transport.written.at(-1)!.chunk;
  t.equal(last.byteOffset, 0, "written from the start of the buffer again");
  t.ok(last.equals(transport.written.at(-1)!.copy));
});
