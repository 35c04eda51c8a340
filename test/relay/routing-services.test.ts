// The routing hook src/grpc/ plugs into: a local service reads a small body first, then answers itself or lets the stream go to the app untouched, body and all.
import t from "tap";
import { parseCommandLine } from "../../src/cli.js";
import { createDaemon } from "../../src/daemon.js";
import type { LocalH2Service } from "../../src/relay/routing.js";
import { h2Connect, h2Request, startH2Upstream } from "../helpers/h2.js";
import { captureLog } from "../helpers/log-capture.js";

t.test("a claimed stream is answered locally or forwarded with the body already read; gRPC calls are recognised", async (t) => {
  const app = await startH2Upstream(t);
  const claimed: { path: string; grpc: boolean; body: string }[] = [];
  const service: LocalH2Service = {
    bodyLimit: 1024,
    claims: (request) => request.method === "POST" && request.url === "/grpc.health.v1.Health/Check",
    answer: (request, body, stream) => {
      claimed.push({ path: request.url, grpc: request.grpc, body: body.toString() });
      if (body.toString() !== "ours") return false;
      stream.respond([":status", "200", "content-type", "application/grpc"], false);
      stream.end(Buffer.from("local"), ["grpc-status", "0"]);
      return true;
    },
  };
  const commandLine = parseCommandLine(["--listen", "127.0.0.1:0", "--upstream", app.url], {}, { writeOut: () => {}, writeErr: () => {} });
  if (commandLine.action !== "run") throw new Error("arguments refused");
  const daemon = createDaemon(commandLine.config, { log: captureLog().log, localH2Services: [service] });
  const { port } = await daemon.start();
  t.teardown(async () => {
    daemon.server.closeAllConnections();
    await daemon.shutdown.run("teardown");
  });
  const session = h2Connect(t, port);
  const headers = { ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" };
  const local = await h2Request(session, headers, "ours");
  t.equal(local.body.toString(), "local");
  t.equal(local.trailers?.["grpc-status"], "0");
  t.equal(app.received.length, 0, "answered locally: the app saw nothing");
  const forwarded = await h2Request(session, headers, "the app's own service");
  t.equal(forwarded.body.toString(), "ok", "not ours: the app answered");
  t.equal(app.received[0]?.body.toString(), "the app's own service", "with the body the service had read");
  t.same(claimed.map((entry) => entry.grpc), [true, true], "gRPC calls recognisable before forwarding");
  t.equal((await h2Request(session, { ":method": "POST", ":path": "/other" }, "x")).status, 200, "other paths are never claimed");
});
