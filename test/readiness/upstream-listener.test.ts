// requiredListenerPorts: the upstream's port joins the required ports only in the entrypoint form, with auto, for a loopback host, and only once.
import t from "tap";
import { parseUpstream, type Upstream } from "../../src/config/upstream-url.js";
import { reachesUpstream, requiredListenerPorts, upstreamListener } from "../../src/readiness/upstream-listener.js";

const upstream = (url: string) => parseUpstream(url) as Upstream;

t.test("which upstreams add their port", async (t) => {
  const cases: Array<[string, string, boolean, "auto" | "off", number[], number[]]> = [
    ["loopback IPv4", "http://127.0.0.1:8000", true, "auto", [15008], [8000, 15008]],
    ["any 127/8 address", "http://127.3.4.5:9", true, "auto", [], [9]],
    ["localhost", "http://LOCALHOST:3000/api", true, "auto", [], [3000]],
    ["IPv6 loopback", "http://[::1]:8000", true, "auto", [], [8000]],
    ["no port: 80", "http://127.0.0.1", true, "auto", [15008], [80, 15008]],
    ["already required", "http://127.0.0.1:8000", true, "auto", [8000, 15008], [8000, 15008]],
    ["another host: its socket is not ours to see", "http://app:8000", true, "auto", [15008], [15008]],
    ["the pod's own address is not loopback", "http://10.0.0.7:8000", true, "auto", [], []],
    ["off", "http://127.0.0.1:8000", true, "off", [15008], [15008]],
    ["the sidecar form", "http://127.0.0.1:8000", false, "auto", [15008], [15008]],
  ];
  for (const [name, url, entrypointForm, mode, given, expected] of cases) {
    t.same(requiredListenerPorts({ requiredPorts: given, upstream: upstream(url), mode, entrypointForm }), expected, name);
  }
});

t.test("where the proxy connects: the upstream's hosts", async (t) => {
  const cases: Array<[string, string[] | undefined]> = [
    ["http://127.0.0.1:8000", ["127.0.0.1"]],
    ["http://127.3.4.5:9", ["127.3.4.5"]],
    ["http://[::1]:8000", ["::1"]],
    ["http://[0:0::1]:8000", ["::1"]],
    ["http://LocalHost:3000", ["127.0.0.1", "::1"]],
    ["http://app:8000", undefined],
  ];
  for (const [url, hosts] of cases) t.same(upstreamListener({ upstream: upstream(url), mode: "auto", entrypointForm: true })?.hosts, hosts, url);
  t.equal(upstreamListener({ upstream: upstream("http://127.0.0.1:8000"), mode: "off", entrypointForm: true }), undefined, "off");
  t.equal(upstreamListener({ upstream: upstream("http://127.0.0.1:8000"), mode: "auto", entrypointForm: false }), undefined, "the sidecar form");
});

t.test("which LISTEN addresses take the proxy's connections", async (t) => {
  const cases: Array<[string[], string, boolean]> = [
    [["127.0.0.1"], "127.0.0.1", true],
    [["127.0.0.1"], "0.0.0.0", true],
    [["127.0.0.1"], "::", true], // dual-stack, the Linux default (bindv6only 0)
    [["127.0.0.1"], "::ffff:127.0.0.1", true],
    [["127.0.0.1"], "::1", false], // python3 -m http.server --bind ::1, Node's listen("localhost") on many hosts
    [["127.0.0.1"], "127.0.0.2", false],
    [["127.0.0.1"], "10.0.0.7", false],
    [["127.0.0.1"], "::ffff:127.0.0.2", false],
    [["::1"], "::1", true],
    [["::1"], "::", true],
    [["::1"], "0.0.0.0", false],
    [["::1"], "127.0.0.1", false],
    [["127.0.0.1", "::1"], "::1", true],
    [["127.0.0.1", "::1"], "127.0.0.1", true],
  ];
  for (const [hosts, address, reaches] of cases) t.equal(reachesUpstream({ port: 8000, hosts }, address), reaches, `${hosts.join(" or ")} <- ${address}`);
});
