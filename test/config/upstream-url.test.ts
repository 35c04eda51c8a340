// --upstream parsed once at the edge: the endpoint every pool and probe connects to, the authority the app is told, the origin and the path prefix.
import t from "tap";
import { parseUpstream, socketPathOf, tcpEndpointOf } from "../../src/config/upstream-url.js";

t.test("each form of --upstream, parsed into the one shape its users read", async (t) => {
  const cases = [
    ["http://127.0.0.1:8000", { kind: "tcp", host: "127.0.0.1", port: 8000, authority: "127.0.0.1:8000", origin: "http://127.0.0.1:8000", pathPrefix: "" }],
    ["http://[::1]:8000/api/", { kind: "tcp", host: "::1", port: 8000, authority: "[::1]:8000", origin: "http://[::1]:8000", pathPrefix: "/api" }],
    ["http://App.Example", { kind: "tcp", host: "app.example", port: 80, authority: "app.example", origin: "http://app.example", pathPrefix: "" }],
    ["http://app:80/v1//", { kind: "tcp", host: "app", port: 80, authority: "app", origin: "http://app", pathPrefix: "/v1" }],
    ["unix:/run/app.sock", { kind: "unix", path: "/run/app.sock", authority: "localhost", origin: "http://localhost", pathPrefix: "" }],
    ["unix:///run/app.sock", { kind: "unix", path: "/run/app.sock", authority: "localhost", origin: "http://localhost", pathPrefix: "" }],
  ] as const;
  for (const [text, expected] of cases) t.same(parseUpstream(text), { ...expected, url: text }, text);
});

t.test("a unix socket's path for the HTTP clients that take one; none for TCP", async (t) => {
  t.equal(socketPathOf({ kind: "unix", path: "/run/app.sock", authority: "localhost" }), "/run/app.sock");
  t.equal(socketPathOf(tcpEndpointOf(new URL("http://127.0.0.1:8000"))), undefined);
});
