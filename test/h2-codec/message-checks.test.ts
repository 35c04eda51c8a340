// The request checks where nghttp2 (what node:http2 served before the codec) refuses and the codec took the request: each list found by the session differential.
import t from "tap";
import { checkRequestHead, checkTrailers, MessageFacts } from "../../src/h2-codec/message-checks.js";

const base = [":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.test"];
const withField = (name: string, value: string) => [...base, name, value];
const withPseudo = (name: string, value: string) => base.map((item, i) => (i % 2 === 1 && base[i - 1] === name ? value : item));

/** Lists nghttp2 resets (RST_STREAM PROTOCOL_ERROR before its app sees them) or, for a regular field's octets, hands on without the field. */
const REFUSED: readonly { readonly why: string; readonly fields: readonly string[] }[] = [
  { why: "neither :authority nor host (RFC 9110 §7.2: an HTTP/1.1 app needs a Host)", fields: [":method", "GET", ":scheme", "http", ":path", "/"] },
  { why: "an empty :authority", fields: withPseudo(":authority", "") },
  { why: "a :authority with a space", fields: withPseudo(":authority", "a b") },
  { why: "a :authority with a slash", fields: withPseudo(":authority", "a/b") },
  { why: "an empty :method", fields: withPseudo(":method", "") },
  { why: "a :method with a space (a request line split on the way to HTTP/1.1)", fields: withPseudo(":method", "G ET") },
  { why: "a :path with a space", fields: withPseudo(":path", "/a b") },
  { why: "a :path with a control octet", fields: withPseudo(":path", "/a\x01") },
  { why: "a :path that is not origin-form for http", fields: withPseudo(":path", "abc") },
  { why: "an absolute-form :path for http", fields: withPseudo(":path", "http://a/b") },
  { why: 'a :path of "*" on GET', fields: withPseudo(":path", "*") },
  { why: "a :scheme that is not a scheme", fields: withPseudo(":scheme", "1http") },
  { why: "an empty host", fields: [":method", "GET", ":scheme", "http", ":path", "/", "host", ""] },
  { why: "a second host", fields: [...withField("host", "a.test"), "host", "b.test"] },
  { why: "a host with a space", fields: withField("host", "a b") },
  { why: "a second content-length of the same value", fields: [...withField("content-length", "0"), "content-length", "0"] },
  { why: "a second content-length with a leading zero", fields: [...withField("content-length", "00"), "content-length", "0"] },
  { why: "a value with SOH", fields: withField("x-a", "a\x01b") },
  { why: "a value with a vertical tab", fields: withField("x-a", "a\x0bb") },
  { why: "a value with DEL", fields: withField("x-a", "a\x7fb") },
];

const TAKEN: readonly { readonly why: string; readonly fields: readonly string[] }[] = [
  { why: "host without :authority", fields: [":method", "GET", ":scheme", "http", ":path", "/", "host", "example.test:8443"] },
  { why: 'OPTIONS with a :path of "*"', fields: [":method", "OPTIONS", ":scheme", "https", ":path", "*", ":authority", "a.test"] },
  { why: "CONNECT with :authority only", fields: [":method", "CONNECT", ":authority", "a.test:443"] },
  { why: "an IPv6 :authority", fields: withPseudo(":authority", "[::1]:8080") },
  { why: "a :path with obs-text and every visible ASCII octet", fields: withPseudo(":path", "/\xe9!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~") },
  { why: "a value with HTAB inside and obs-text", fields: withField("x-a", "a\tb\xff") },
  { why: "a token method nghttp2 passes", fields: withPseudo(":method", "M-SEARCH") },
  { why: "a :path that is not origin-form, for a scheme other than http(s)", fields: withPseudo(":scheme", "foo").map((item, i, all) => (all[i - 1] === ":path" ? "abc" : item)) },
];

t.test("requests nghttp2 refuses, the codec refuses", async (t) => {
  for (const { why, fields } of REFUSED) t.notOk(checkRequestHead(fields, new MessageFacts()), why);
});

t.test("requests nghttp2 takes, the codec takes", async (t) => {
  for (const { why, fields } of TAKEN) {
    const facts = new MessageFacts();
    t.ok(checkRequestHead(fields, facts), `${why}${facts.reason === "" ? "" : ` (refused: ${facts.reason})`}`);
  }
});

t.test("a content-length among trailers is refused when the head had one, as nghttp2 does", async (t) => {
  const facts = new MessageFacts();
  t.ok(checkRequestHead(withField("content-length", "3"), facts));
  t.notOk(checkTrailers(["content-length", "3"], facts), "a second content-length");
  t.equal(facts.contentLength, 3, "the head's length still counts");
  t.ok(checkTrailers(["x-checksum", "1"], facts), "other trailers pass");
});
