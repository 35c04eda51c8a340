// The one authority rule on every pairing of protocols (issue 52.4): a table of hosts, each sent as Host or :authority by HTTP/1.1 and h2 clients to HTTP/1.1 and h2c apps that record what arrives; an invalid one is a 400 (HTTP/1.1) or a stream error (h2) and never reaches the app.
import { connect, isIPv6 } from "node:net";
import fc from "fast-check";
import t, { type Test } from "tap";
import { authorityIsValid } from "../../src/http/authority.js";
import { h2Connect, h2Request, startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

/** Hosts the rule lets through: names, ports, IP literals, IPvFuture, pct-encoded octets, an empty port. */
const VALID = ["svc.example", "svc.example:8443", "127.0.0.1:80", "[::1]", "[::1]:8080", "[v1.fe]", "a%41b", "xn--bcher-kva.example.", "svc.example:"];
/**
 * Hosts it refuses: the three seen from outside (issue 52), and what passes the codec's octet set
 * but not the grammar (a quote, `..`, a port that is not digits, a bad %-escape, an unclosed or
 * invalid literal, a zone id), and an empty Host.
 */
const INVALID = ["a b", "evil@x/y?z", "x/../admin", "x..y", 'a"b', "x:8o", "a%zz", "[::1", "[zz]:80", "[fe80::1%25eth0]", "[::1]x", ":80", "a{b}", ""];

t.test("the rule's table", async (t) => {
  for (const host of VALID) t.ok(authorityIsValid(host), `${JSON.stringify(host)} passes`);
  for (const host of INVALID) t.notOk(authorityIsValid(host), `${JSON.stringify(host)} is refused`);
});

/** The rule as it was written before issue 53 took its slices out: the oracle for any value. */
function slicingRule(value: string): boolean {
  let rest: string;
  if (value.charCodeAt(0) === 0x5b) {
    const close = value.indexOf("]");
    if (close === -1) return false;
    const literal = value.slice(1, close);
    if (!/^[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/.test(literal) && (literal.includes("%") || !isIPv6(literal))) return false;
    rest = value.slice(close + 1);
  } else {
    const colon = value.indexOf(":");
    const host = colon === -1 ? value : value.slice(0, colon);
    if (!/^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/.test(host) || host.includes("..")) return false;
    rest = colon === -1 ? "" : value.slice(colon);
  }
  return rest === "" || (rest.charCodeAt(0) === 0x3a && /^[0-9]*$/.test(rest.slice(1)));
}

t.test("the rule without slices: the same answer as with them, for any value", async () => {
  const unit = fc.constantFrom(..."aZ09-._~!$&'()*+,;=%:[]@/?#. vF".split(""));
  fc.assert(fc.property(fc.oneof(fc.string({ unit, maxLength: 24 }), fc.constantFrom(...VALID, ...INVALID)), (value) => authorityIsValid(value) === slicingRule(value)), { numRuns: 20_000 });
});

interface Http1Answer {
  readonly status: number;
  /** The body, when the answer said its length. */
  readonly body: string;
}

/**
 * One HTTP/1.1 request with this Host, written raw (no client library judges the value), read
 * until the proxy closes the connection: `close` adds `Connection: close`; without it, only the
 * proxy's own decision (a 400's) closes it, else the test's bound fails it.
 */
function http1Request(port: number, host: string, { close = false, extra = "", target = "/where" } = {}): Promise<Http1Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0);
      const start = text.indexOf("\r\n\r\n") + 4;
      resolve({ status, body: text.slice(start, start + length) });
      socket.destroy();
    });
    socket.on("error", reject);
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${close ? "Connection: close\r\n" : ""}${extra}\r\n`);
  });
}

type Pairing = "HTTP/1.1 to HTTP/1.1" | "HTTP/1.1 to h2c" | "h2 to HTTP/1.1" | "h2 to h2c";

/** A daemon in front of a recording app of the pairing's protocol; `seen()` is what the app got as Host (or :authority) and X-Forwarded-Host. */
async function setUp(t: Test, pairing: Pairing) {
  const appSpeaksH2c = pairing.endsWith("h2c");
  const http1App = appSpeaksH2c ? undefined : await startUpstream(t);
  const h2cApp = appSpeaksH2c ? await startH2Upstream(t) : undefined;
  const url = (http1App ?? h2cApp)!.url;
  const protocol = pairing === "HTTP/1.1 to h2c" ? ["--upstream-protocol", "h2c"] : pairing === "h2 to HTTP/1.1" ? ["--upstream-protocol", "http1"] : [];
  const daemon = await startTestDaemon(t, ["--upstream", url, ...protocol]);
  const seen = (): Array<{ host: unknown; forwardedHost: unknown }> =>
    http1App !== undefined
      ? http1App.received.map((one) => ({ host: one.headers.host, forwardedHost: one.headers["x-forwarded-host"] }))
      : h2cApp!.received.map((one) => ({ host: one.headers[":authority"], forwardedHost: one.headers["x-forwarded-host"] }));
  return { daemon, seen, upstreamHost: url.slice("http://".length) };
}

const PAIRINGS: readonly Pairing[] = ["HTTP/1.1 to HTTP/1.1", "HTTP/1.1 to h2c", "h2 to HTTP/1.1", "h2 to h2c"];

for (const pairing of PAIRINGS) {
  t.test(`${pairing}: a valid host reaches the app as sent; an invalid one never does`, async (t) => {
    const { daemon, seen } = await setUp(t, pairing);
    const session = pairing.startsWith("h2") ? h2Connect(t, daemon.port) : undefined;
    for (const host of [...VALID, ...INVALID]) {
      const valid = VALID.includes(host);
      const before = seen().length;
      if (session === undefined) {
        // An invalid one keeps the connection open as far as the client is concerned: the close after the 400 is the proxy's, as for every other 400.
        const answer = await http1Request(daemon.port, host, { close: valid });
        if (valid) t.equal(answer.status, 200, `${JSON.stringify(host)}: forwarded`);
        else {
          t.equal(answer.status, 400, `${JSON.stringify(host)}: 400, and the connection closed after it`);
          t.match(JSON.parse(answer.body), { error: { code: 400, message: "invalid host", requestId: String } }, `${JSON.stringify(host)}: the proxy's own envelope`);
        }
      } else {
        const answer = await h2Request(session, { ":path": "/where", ":authority": host });
        if (valid) t.equal(answer.status, 200, `${JSON.stringify(host)}: forwarded`);
        else t.same([answer.status, answer.rstCode], [0, 1], `${JSON.stringify(host)}: RST_STREAM PROTOCOL_ERROR`);
      }
      t.same(seen().slice(before), valid ? [{ host, forwardedHost: host }] : [], valid ? `${JSON.stringify(host)}: the app got it as Host and X-Forwarded-Host` : `${JSON.stringify(host)}: the app got nothing`);
    }
  });
}

for (const pairing of ["HTTP/1.1 to HTTP/1.1", "HTTP/1.1 to h2c"] as const) {
  t.test(`${pairing}: a Host the client's Connection lists is hop-by-hop: the app's own authority goes, X-Forwarded-Host says the client's`, async (t) => {
    const { daemon, seen, upstreamHost } = await setUp(t, pairing);
    t.equal((await http1Request(daemon.port, "svc.example", { extra: "Connection: close, host\r\n" })).status, 200);
    t.same(seen(), [{ host: upstreamHost, forwardedHost: "svc.example" }]);
    // Listed or not, it is judged: an invalid one is refused all the same.
    t.equal((await http1Request(daemon.port, "a b", { extra: "Connection: host\r\n" })).status, 400);
    t.equal(seen().length, 1);
  });
}

for (const pairing of ["HTTP/1.1 to HTTP/1.1", "HTTP/1.1 to h2c"] as const) {
  t.test(`${pairing}: an absolute-form target's authority replaces Host, so it passes the same rule; X-Forwarded-Host names it`, async (t) => {
    const { daemon, seen } = await setUp(t, pairing);
    t.equal((await http1Request(daemon.port, "client.example", { close: true, target: "http://svc.example:8443/where" })).status, 200);
    t.same(seen(), [{ host: "svc.example:8443", forwardedHost: "svc.example:8443" }]);
    const refused = await http1Request(daemon.port, "client.example", { target: "http://a..b:8o/where" });
    t.equal(refused.status, 400, "an authority that fails the rule: 400, and the close");
    t.match(JSON.parse(refused.body), { error: { code: 400, message: "bad request target" } });
    t.equal(seen().length, 1, "never reaches the app");
  });
}
