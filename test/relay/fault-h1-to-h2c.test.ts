// A defect of ours in an HTTP/1.1 client's exchange with an h2c app, before any byte of the answer went out: the client gets the 502 an HTTP/1.1 app's exchange gives (not a bare cut), and the process, the pool and the next request carry on.
import { connect } from "node:net";
import t from "tap";
import { armFaults } from "../../src/relay/fault-injection.js";
import { startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { ResponseReader } from "./raw-exchange.js";

/** One raw request; the first final status, or "cut" when the connection closed without a whole answer. */
function rawOutcome(port: number, path: string): Promise<number | "cut"> {
  const reader = new ResponseReader(() => false);
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`));
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      if (reader.finals.length > 0) socket.destroy();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(reader.finals[0] ?? "cut");
    });
  });
}

t.test("a fault as the h2c app's head is handed on: the HTTP/1.1 client gets a 502, the next request a 200", async (t) => {
  const app = await startH2Upstream(t);
  app.handle((stream) => {
    stream.respond({ ":status": 200, "content-length": "2" });
    stream.end("ok");
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "h2c"]);
  t.teardown(() => armFaults(undefined));
  // The app stream's first event is its response head: the only "h2 stream event" an HTTP/1.1 client's exchange has before an answer.
  let passes = 0;
  armFaults((seam) => seam === "h2 stream event" && ++passes === 1);
  t.equal(await rawOutcome(daemon.port, "/victim"), 502, "the victim gets our 502, not a cut");
  armFaults(undefined);
  const lines = daemon.logs.records.filter((record) => record.msg === "internal error");
  t.equal(lines.length, 1, "one internal error line");
  t.match(String((lines[0] as { err?: { stack?: string } })?.err?.stack), /InjectedFault: fault injected at h2 stream event/, "the defect, with its stack");
  t.equal(await rawOutcome(daemon.port, "/after"), 200, "the next request is relayed");
});
