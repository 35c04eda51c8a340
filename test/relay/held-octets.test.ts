// The one holder of octets held for a peer: what goes in comes out whole and in order, 1-octet pieces cost one buffer of at most twice their octets, and a buffer handed out is never written again.
import fc from "fast-check";
import t from "tap";
import { HeldOctets } from "../../src/relay/held-octets.js";

t.test("pieces of any sizes come out as one buffer, in order", async () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ minLength: 0, maxLength: 3000 }), { maxLength: 40 }), (pieces) => {
      const held = new HeldOctets();
      for (const piece of pieces) held.append(Buffer.from(piece));
      const expected = Buffer.concat(pieces.map((piece) => Buffer.from(piece)));
      if (held.length !== expected.length) return false;
      const taken = held.take();
      return taken.equals(expected) && held.length === 0;
    }),
  );
});

t.test("1-octet pieces: one buffer, not a Buffer each", async (t) => {
  const held = new HeldOctets();
  const octet = Buffer.from("a");
  for (let index = 0; index < 65_535; index++) held.append(octet);
  const taken = held.take();
  t.equal(taken.length, 65_535);
  t.ok(taken.buffer.byteLength <= 2 * 65_535, `backed by ${taken.buffer.byteLength} octets`);
});

t.test("what was taken is the caller's: appends after it start a buffer of their own", async (t) => {
  const held = new HeldOctets();
  held.append(Buffer.from("first"));
  const first = held.take();
  held.append(Buffer.from("SECOND"));
  t.equal(first.toString(), "first");
  t.equal(held.take().toString(), "SECOND");
  t.equal(held.take().length, 0, "nothing held: an empty buffer");
});
