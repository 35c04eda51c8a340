// The admin listener's request targets over raw sockets: one the URL parser cannot read is a 400, a path it has no route for a 404, never a 500 from an exception in routing.
import { connect } from "node:net";
import t from "tap";
import { AdminServer } from "../../src/admin/admin-server.js";
import { MaintenanceMode } from "../../src/admin/maintenance.js";
import type { AdminStatus } from "../../src/admin/status.js";
import { captureLog } from "../helpers/log-capture.js";

/** Writes `bytes` on a fresh connection and reads until the server closes it (each request says `connection: close`). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.end(bytes);
  });
}

t.test("GET //, GET http://[ and the like: 400 or 404 with a JSON body, never a 500", async (t) => {
  let drains = 0;
  const server = new AdminServer(
    { host: "127.0.0.1", port: 0 },
    { drain: () => drains++, maintenance: new MaintenanceMode({ log: captureLog().log }), status: () => Promise.resolve({} as AdminStatus), stop: () => undefined, setLogLevel: () => undefined },
  );
  const address = await server.start();
  t.teardown(() => server.close());
  const cases: Array<[string, number, string]> = [
    ["//", 404, '{"error":"not found"}'],
    ["//drain", 404, '{"error":"not found"}'],
    ["http://[", 400, '{"error":"bad request target"}'],
    ["http://[::1", 400, '{"error":"bad request target"}'],
    ["*", 400, '{"error":"bad request target"}'],
    ["/status?%zz", 200, "{}"],
    ["http://admin/status", 200, "{}"],
  ];
  for (const [target, status, body] of cases) {
    const answer = await rawExchange(address.port, `GET ${target} HTTP/1.1\r\nhost: admin\r\nconnection: close\r\n\r\n`);
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `GET ${target}: ${status}`);
    t.equal(answer.slice(answer.indexOf("\r\n\r\n") + 4), `${body}\n`, `GET ${target}: its body`);
  }
  const drain = await rawExchange(address.port, "POST //drain HTTP/1.1\r\nhost: admin\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
  t.match(drain, /^HTTP\/1\.1 404 /, "POST //drain is no drain");
  t.equal(drains, 0);
});
