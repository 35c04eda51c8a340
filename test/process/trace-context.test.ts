// traceparent against the built binary (CONTRACT §17): passed to the app unchanged, valid or not; a valid one's trace id is the access line's traceId, over HTTP/1.1 and h2.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const VALID = `00-${TRACE}-00f067aa0ba902b7-01`;
const INVALID = `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`;

t.test("valid: passed on and logged; invalid: passed on, not logged", { skip }, async (t) => {
  const seen = new Map<string, string | undefined>();
  const app = createServer((request, response) => {
    seen.set(request.url ?? "", request.headers.traceparent as string | undefined);
    response.end("ok");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  t.teardown(() => app.close());
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${(app.address() as AddressInfo).port}`, "--access-log", "--upstream-protocol", "http1"]);
  await send(daemon.port, "/valid", { headers: { traceparent: VALID } });
  await send(daemon.port, "/invalid", { headers: { traceparent: INVALID } });
  await send(daemon.port, "/none");
  const session = h2Connect(t, daemon.port);
  await h2Request(session, { ":path": "/valid-h2", traceparent: VALID });
  await h2Request(session, { ":path": "/invalid-h2", traceparent: INVALID });
  session.close();
  t.same(Object.fromEntries(seen), { "/valid": VALID, "/invalid": INVALID, "/none": undefined, "/valid-h2": VALID, "/invalid-h2": INVALID }, "the app sees each header unchanged");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  const lines = new Map(daemon.records.filter((record) => record.msg === "request").map((record) => [record.path, record]));
  t.equal(lines.size, 5);
  t.equal(lines.get("/valid")?.traceId, TRACE);
  t.equal(lines.get("/valid-h2")?.traceId, TRACE);
  for (const path of ["/invalid", "/invalid-h2", "/none"]) t.notOk("traceId" in (lines.get(path) ?? {}), `${path}: no traceId`);
});

t.test("two traceparent lines are one invalid value (a comma list): passed on, not logged, over HTTP/1.1 and h2 alike", { skip }, async (t) => {
  const OTHER = `00-${TRACE}-00f067aa0ba902b8-01`;
  const seen = new Map<string, string | string[] | undefined>();
  const app = createServer((request, response) => {
    seen.set(request.url ?? "", request.headers.traceparent);
    response.end("ok");
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  t.teardown(() => app.close());
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${(app.address() as AddressInfo).port}`, "--access-log", "--upstream-protocol", "http1"]);
  await send(daemon.port, "/twice", { headers: { traceparent: [VALID, OTHER] } });
  const session = h2Connect(t, daemon.port);
  await h2Request(session, { ":path": "/twice-h2", traceparent: [VALID, OTHER] });
  session.close();
  t.same(Object.fromEntries(seen), { "/twice": `${VALID}, ${OTHER}`, "/twice-h2": `${VALID}, ${OTHER}` }, "the app gets both");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  const lines = new Map(daemon.records.filter((record) => record.msg === "request").map((record) => [record.path, record]));
  t.equal(lines.size, 2);
  for (const path of ["/twice", "/twice-h2"]) t.notOk("traceId" in (lines.get(path) ?? {}), `${path}: no traceId`);
});
