// Proxy-made errors by Accept: the branded page for browser navigations, the JSON envelope for everyone else.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { loadErrorPages } from "../../src/http/error-pages.js";
import { wantsHtml } from "../../src/http/error-response.js";
import { send, type Reply } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { h2Connect, h2Request, startH2Upstream, type H2Answer } from "../helpers/h2.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const ACCEPT_FORMS: Array<[string, string | undefined, boolean]> = [
  ["browser navigation", BROWSER, true],
  ["*/*", "*/*", false],
  ["axios", "application/json, text/plain, */*", false],
  ["application/json", "application/json", false],
  ["no Accept", undefined, false],
];

function checkShape(t: Test, reply: Reply, status: number, html: boolean, message: string) {
  t.equal(reply.status, status);
  t.equal(reply.headers["cache-control"], "no-store");
  const requestId = reply.headers["x-request-id"];
  t.type(requestId, "string");
  if (html) {
    t.equal(reply.headers["content-type"], "text/html; charset=utf-8");
    t.match(reply.text(), /^<!doctype html>/);
    t.match(reply.text(), `<p class="status">${status}</p>`);
    t.match(reply.text(), `<code>${String(requestId)}</code>`, "the request id is on the page");
  } else {
    t.equal(reply.headers["content-type"], "application/json");
    t.same(reply.json(), { error: { code: status, message, requestId } });
  }
}

t.test("502, 503 and 504 in each Accept form", async (t) => {
  const down = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const slowUpstream = await startUpstream(t);
  slowUpstream.handleRaw(() => {});
  const slow = await startTestDaemon(t, ["--upstream", slowUpstream.url, "--response-header-timeout", "50ms"]);
  const unready = await startTestDaemon(t, ["--proc-root", join(fixtures, "header-only"), "--readiness-required-listener", "15008"]);
  for (const [form, accept, html] of ACCEPT_FORMS) {
    const headers = accept === undefined ? {} : { accept };
    checkShape(t, await send(down.port, "/page", { headers }), 502, html, "upstream unavailable");
    checkShape(t, await send(slow.port, "/page", { headers }), 504, html, "upstream timeout");
    const readyz = await send(unready.port, "/readyz", { headers });
    if (html) checkShape(t, readyz, 503, true, "not ready");
    else t.equal(readyz.text(), '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}', `${form}: /readyz keeps its JSON`);
    const head = await send(down.port, "/page", { method: "HEAD", headers });
    t.equal(head.status, 502, `${form}: HEAD keeps the status`);
    t.equal(head.body.length, 0, `${form}: HEAD has no body`);
  }
});

t.test("who counts as a browser", async (t) => {
  t.ok(wantsHtml("text/html"));
  t.ok(wantsHtml("TEXT/HTML; charset=utf-8"));
  t.ok(wantsHtml(BROWSER));
  t.notOk(wantsHtml("*/*"));
  t.notOk(wantsHtml("text/*"));
  t.notOk(wantsHtml("application/json, text/plain, */*"));
  t.notOk(wantsHtml("text/html;q=0, application/json"));
  t.notOk(wantsHtml("application/xhtml+xml"));
  t.notOk(wantsHtml(undefined));
});

t.test("every embedded page is standalone: nothing a browser would fetch", async (t) => {
  const pages = loadErrorPages(undefined);
  for (const status of [502, 503, 504, 500]) {
    const page = pages.pageFor(status);
    const html = Buffer.concat([page.before, Buffer.from("id"), page.after]).toString();
    t.notMatch(html, /\ssrc\s*=/i, `${status}: no src=`);
    t.notMatch(html, /@import/i, `${status}: no @import`);
    t.notMatch(html, /url\(\s*['"]?(?:[a-z][\w+.-]*:|\/\/)/i, `${status}: no url() with a scheme or //`);
    for (const [, href] of html.matchAll(/href\s*=\s*["']?([^"'\s>]*)/gi)) {
      t.ok(href === "#" || href!.startsWith("#") || href!.startsWith("data:"), `${status}: href ${href!.slice(0, 30)} is local`);
    }
    t.match(html, /<style>/, "inline style");
    t.match(html, /prefers-color-scheme: dark/, "a dark scheme");
    t.match(html, /name="viewport"/, "readable on a phone");
  }
});

t.test("upstream 5xx bodies pass through by default; interception replaces them for browsers only", async (t) => {
  const upstream = await startUpstream(t);
  let status = 500;
  upstream.handle((_req, res) => {
    res.writeHead(status, { "content-type": "application/json", "x-from": "upstream" });
    res.end(`{"detail":"model crashed ${status}"}`);
  });
  const plain = await startTestDaemon(t, ["--upstream", upstream.url]);
  const intercepting = await startTestDaemon(t, ["--upstream", upstream.url, "--error-pages-intercept-upstream"]);
  for (status of [500, 503]) {
    const own = `{"detail":"model crashed ${status}"}`;
    for (const [form, accept] of ACCEPT_FORMS) {
      const headers = accept === undefined ? {} : { accept };
      const byDefault = await send(plain.port, "/v1/chat", { headers });
      t.equal(byDefault.status, status);
      t.equal(byDefault.text(), own, `${status} ${form}: byte for byte by default`);
      const intercepted = await send(intercepting.port, "/v1/chat", { headers });
      t.equal(intercepted.status, status, "status kept");
      if (form === "browser navigation") {
        t.equal(intercepted.headers["content-type"], "text/html; charset=utf-8");
        t.match(intercepted.text(), `<p class="status">${status}</p>`, "the page shows the upstream's code");
        const logged = intercepting.logs.records.find((record) => record.requestId === intercepted.headers["x-request-id"]);
        // The first of a window at warn, the rest at debug with every detail (an outage must not flood the log).
        t.match(logged, { msg: "upstream error replaced by the error page", status }, "the page's request id is in the log");
        t.ok(logged?.level === 40 || logged?.level === 20);
      } else {
        t.equal(intercepted.text(), own, `${status} ${form}: API clients keep the upstream's body`);
      }
    }
  }
});

t.test("an intercepted 5xx whose body never ends: the page goes when the status arrives, and the app is not read on (issue 37.6)", async (t) => {
  const upstream = await startUpstream(t);
  let appConnectionClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (appConnectionClosed = resolve));
  upstream.handle((req, res) => {
    res.writeHead(500, { "content-type": "text/plain" });
    res.write("still failing\n");
    // Never ended: only the proxy letting go of the connection closes it.
    req.socket.once("close", appConnectionClosed);
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--error-pages-intercept-upstream"]);
  const reply = await send(daemon.port, "/endless", { headers: { accept: BROWSER } });
  t.equal(reply.status, 500, "status kept");
  t.match(reply.text(), '<p class="status">500</p>', "the whole page, without waiting for the app's body");
  await closed;
  t.pass("the app's connection was closed, not read on");
});

t.test("interception holds whichever protocols the client and the app speak: the page at once for a browser, the app's body for the rest", async (t) => {
  // The app's 503 on /endless never ends: only the proxy letting go of it closes the app's stream or connection.
  let appLetGo: () => void = () => {};
  const h2App = await startH2Upstream(t);
  h2App.handle((stream, headers) => {
    stream.respond({ ":status": 503, "content-type": "application/json" });
    if (headers[":path"] !== "/endless") return void stream.end(APP_BODY);
    stream.on("close", () => appLetGo());
    stream.write('{"detail":"still failing"}');
  });
  const h1App = await startUpstream(t);
  h1App.handle((req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    if (req.url !== "/endless") return void res.end(APP_BODY);
    req.socket.once("close", () => appLetGo());
    res.write('{"detail":"still failing"}');
  });
  const overH2 = async (port: number, path: string, accept: string) => h2Answer(await h2Request(h2Connect(t, port), { ":path": path, accept }));
  const ways = [
    {
      name: "HTTP/1.1 client, h2c app",
      args: ["--upstream", h2App.url, "--upstream-protocol", "h2c"],
      ask: async (port: number, path: string, accept: string) => {
        const reply = await send(port, path, { headers: { accept } });
        return { status: reply.status, type: reply.headers["content-type"], body: reply.text(), id: reply.headers["x-request-id"] };
      },
    },
    { name: "h2 client, h2c app", args: ["--upstream", h2App.url], ask: overH2 },
    { name: "h2 client, HTTP/1.1 app", args: ["--upstream", h1App.url, "--upstream-protocol", "http1"], ask: overH2 },
  ];
  for (const way of ways) {
    const daemon = await startTestDaemon(t, [...way.args, "--error-pages-intercept-upstream"]);
    const letGo = new Promise<void>((resolve) => (appLetGo = resolve));
    const page = await way.ask(daemon.port, "/endless", BROWSER);
    t.equal(page.status, 503, `${way.name}: the app's status kept`);
    t.equal(page.type, "text/html; charset=utf-8", `${way.name}: the page, without waiting for the app's endless body`);
    t.match(page.body, '<p class="status">503</p>');
    t.match(
      daemon.logs.records.find((record) => record.requestId === page.id),
      { msg: "upstream error replaced by the error page", status: 503, url: "/endless" },
      `${way.name}: the line that names the page's request id`,
    );
    await letGo;
    t.pass(`${way.name}: the app's stream or connection was let go, not read on`);
    const api = await way.ask(daemon.port, "/api", "application/json, text/plain, */*");
    t.equal(api.status, 503);
    t.equal(api.body, APP_BODY, `${way.name}: an API client keeps the app's own body`);
  }
});

const APP_BODY = '{"detail":"the app\'s own"}';

function h2Answer(answer: H2Answer): { status: number; type: unknown; body: string; id: unknown } {
  return { status: answer.status, type: answer.headers["content-type"], body: answer.body.toString(), id: answer.headers["x-request-id"] };
}

t.test("--error-pages-dir replaces pages; missing files keep the embedded ones", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rp-pages-"));
  writeFileSync(join(dir, "502.html"), "<!doctype html><title>ours</title><p>Our 502, id {{requestId}}</p>");
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--error-pages-dir", dir]);
  const reply = await send(daemon.port, "/", { headers: { accept: BROWSER, "x-request-id": "req-123" } });
  t.equal(reply.text(), "<!doctype html><title>ours</title><p>Our 502, id req-123</p>", "the client's sane X-Request-Id is used");
  const pages = loadErrorPages(dir);
  t.match(Buffer.concat([pages.pageFor(504).before, pages.pageFor(504).after]).toString(), /Upstream timeout/, "504 is still the embedded page");
});
