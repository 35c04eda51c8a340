// A real browser loads the 502 page through the proxy: it renders, and the page makes no request but itself.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { chromium, type Browser } from "playwright-core";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(import.meta.dirname, "../../dist/test-artifacts");
// The flags this workplace's machines need: no sandbox as root, and none of Chromium's own
// background traffic (there is no network to reach).
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

t.test("Chromium renders the 502 page standalone", { skip: !existsSync(CHROMIUM) && `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)` }, async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--metrics-listen", "127.0.0.1:0"]);
  // Every request that reaches the proxy is counted by its own metrics.
  const proxyRequests = async () => {
    const text = (await send(daemon.metricsPort!, "/metrics")).text();
    return text.split("\n").filter((line) => line.startsWith("readiness_proxy_requests_total{")).reduce((sum, line) => sum + Number(line.split(" ")[1]), 0);
  };
  // playwright-core makes its own empty profile directory per launch.
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  mkdirSync(SCREENSHOTS, { recursive: true });
  const shots: Array<[string, { width: number; height: number }, "light" | "dark"]> = [
    ["error-page-502-desktop-light.png", { width: 1280, height: 800 }, "light"],
    ["error-page-502-phone-dark.png", { width: 390, height: 844 }, "dark"],
  ];
  for (const [file, viewport, colorScheme] of shots) {
    const page = await browser.newPage({ viewport, colorScheme });
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    const url = `http://127.0.0.1:${daemon.port}/v1/chat/completions`;
    const response = await page.goto(url);
    t.equal(response?.status(), 502, "the status reaches the browser unchanged");
    t.equal(response?.headers()["content-type"], "text/html; charset=utf-8", "a navigation gets the page");
    t.equal(await page.locator(".status").textContent(), "502");
    t.equal(await page.locator("h1").textContent(), "Upstream unavailable");
    t.match(await page.locator("code").textContent(), /^[0-9a-f-]{36}$/, "the request id is shown");
    // Strings, not functions: they run in the page, and this project's types have no DOM.
    const background = await page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
    t.equal(background, colorScheme === "dark" ? "rgb(15, 17, 21)" : "rgb(246, 247, 249)", `${colorScheme} scheme applied: the inline style works`);
    const overflow = await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth");
    t.ok(overflow, `no horizontal scrolling at ${viewport.width}px`);
    await page.screenshot({ path: join(SCREENSHOTS, file), fullPage: true });
    t.same(requested, [url], "the page itself is the only request the browser made for it");
    await page.close();
    t.ok(statSync(join(SCREENSHOTS, file)).size > 1000, `screenshot written: dist/test-artifacts/${file}`);
  }
  t.equal(await proxyRequests(), shots.length, "one request per page view reached the proxy (no favicon, no assets)");
});
