// Request ids made by the proxy: version-4 UUIDs as crypto.randomUUID() writes them, never the same twice, across the batches they are made in.
import t from "tap";
import { randomUuid } from "../../src/http/random-uuid.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test("version 4, variant 10, lower-case hex, 36 characters; 10,000 in a row (156 batches) all different", async (t) => {
  const seen = new Set<string>();
  let malformed = 0;
  for (let count = 0; count < 10_000; count++) {
    const id = randomUuid();
    if (!UUID_V4.test(id)) malformed++;
    seen.add(id);
  }
  t.equal(malformed, 0);
  t.equal(seen.size, 10_000);
});

t.test("the random bits are spread: every hex digit of the random positions appears, none far more often than the others", async (t) => {
  const counts = new Map<string, number>();
  for (let count = 0; count < 4_000; count++) for (const digit of randomUuid().slice(0, 8)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
  t.equal(counts.size, 16);
  // 32,000 digits: 2,000 of each expected; 1,700-2,300 is over 6 standard deviations wide.
  for (const [digit, count] of counts) t.ok(count > 1_700 && count < 2_300, `${digit}: ${count}`);
});
