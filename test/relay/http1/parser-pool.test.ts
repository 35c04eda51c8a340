// The request parser free list: lent and given back counted, at most so many kept, and a parser lent again reads its new connection's bytes from a fresh start.
import t from "tap";
import { BODY, type ParsedHead, type ParserHandler } from "../../../src/relay/http1/llhttp-binding.js";
import { ParserPool } from "../../../src/relay/http1/parser-pool.js";

/** A handler that records the heads (copies: the parser fills one head per message, valid while onHead runs) and message ends it is given, and any fault. */
function recorder() {
  const heads: ParsedHead[] = [];
  const events: string[] = [];
  const handler: ParserHandler = {
    onHead: (head) => {
      heads.push({ ...head });
      events.push(`head ${head.method} ${head.url}`);
      return BODY.parse;
    },
    onBody: (chunk) => events.push(`body ${chunk.toString("latin1")}`),
    onMessageComplete: () => events.push("complete"),
    onFault: (error) => events.push(`fault ${String(error)}`),
  };
  return { heads, events, handler };
}

t.test("lent and given back are counted; beyond the kept number a parser is closed, not kept", async (t) => {
  const pool = new ParserPool(2);
  const parsers = [0, 1, 2].map(() => pool.lend(recorder().handler));
  t.equal(pool.lent, 3);
  t.equal(pool.free, 0);
  for (const parser of parsers) pool.giveBack(parser);
  t.equal(pool.lent, 0);
  t.equal(pool.free, 2, "two kept, the third closed");
  const again = pool.lend(recorder().handler);
  t.ok(parsers.includes(again), "a kept one is lent again");
  t.equal(pool.free, 1);
  pool.discard(again);
  t.equal(pool.lent, 0, "a discarded one is no longer lent");
  t.equal(pool.free, 1, "nor kept");
});

t.test("a parser lent again starts afresh, whatever its last connection left in it", async (t) => {
  const pool = new ParserPool(1);
  const first = recorder();
  const parser = pool.lend(first.handler);
  // The first connection's last bytes: a whole request, then one whose body is under way.
  const bytes = "GET /one HTTP/1.1\r\nHost: a\r\n\r\nPOST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc";
  t.equal(parser.execute(Buffer.from(bytes)), bytes.length);
  t.same(first.events, ["head GET /one", "complete", "head POST /two", "body abc"]);
  pool.giveBack(parser);
  const second = recorder();
  t.equal(pool.lend(second.handler), parser, "the same parser");
  const request = "GET /three HTTP/1.1\r\nHost: b\r\n\r\n";
  t.equal(parser.execute(Buffer.from(request)), request.length, "a new request parses from its first byte");
  t.same(second.events, ["head GET /three", "complete"], "the new connection's handler hears of it");
  t.equal(first.events.length, 4, "the old one hears nothing more");
  t.same(second.heads[0]?.headers, ["Host", "b"]);
});

t.test("a parser given back calls no handler of its last connection, even if bytes reached it", async (t) => {
  const pool = new ParserPool(1);
  const first = recorder();
  const parser = pool.lend(first.handler);
  pool.giveBack(parser);
  parser.execute(Buffer.from("GET /late HTTP/1.1\r\nHost: a\r\n\r\n"));
  t.same(first.events, [], "released: its handler is no longer called");
});
