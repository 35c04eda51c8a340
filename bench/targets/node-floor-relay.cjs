// The floor of an HTTP/1.1 proxy on this runtime: each client connection paired with its own upstream connection, octets passed on as read (no routing, no head rewritten), and with `llhttp` each direction also parsed by the runtime's llhttp binding.
// Usage: node node-floor-relay.cjs <listen port> <upstream port> bytes|llhttp
"use strict";
const net = require("node:net");

const [listenPort, upstreamPort, mode] = process.argv.slice(2);
const parse = mode === "llhttp";
const { HTTPParser } = parse ? process.getBuiltinModule("node:_http_common") : {};

/** A parser that sees every octet of one direction and does nothing with what it finds (the parse's own cost: the binding's callbacks into JS included). */
function parserFor(kind) {
  const parser = new HTTPParser();
  parser.initialize(kind, {}, 16 * 1024, 0);
  parser[HTTPParser.kOnHeadersComplete] = () => 0;
  parser[HTTPParser.kOnBody] = () => {};
  parser[HTTPParser.kOnMessageComplete] = () => {};
  parser[HTTPParser.kOnHeaders] = () => {};
  return parser;
}

net
  .createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ port: Number(upstreamPort), host: "127.0.0.1", noDelay: true });
    const requests = parse ? parserFor(HTTPParser.REQUEST) : undefined;
    const responses = parse ? parserFor(HTTPParser.RESPONSE) : undefined;
    client.on("data", (chunk) => {
      requests?.execute(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      responses?.execute(chunk);
      client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", close);
      socket.on("close", close);
    }
  })
  .listen(Number(listenPort), "127.0.0.1");
