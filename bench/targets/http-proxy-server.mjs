// Peer: node-http-proxy with a keep-alive agent, the way its README sets it up. Usage: node http-proxy-server.mjs PORT UPSTREAM_URL
import { createServer, Agent } from "node:http";
import httpProxy from "http-proxy";

const [port, target] = process.argv.slice(2);
const proxy = httpProxy.createProxyServer({ target, agent: new Agent({ keepAlive: true, maxSockets: 256 }), xfwd: true });
proxy.on("error", (_error, _req, res) => {
  res.writeHead?.(502);
  res.end();
});
createServer((req, res) => proxy.web(req, res)).listen(Number(port), "127.0.0.1");
