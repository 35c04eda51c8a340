// The floor for /readyz: a bare node:http server answering a fixed JSON body. Usage: node hello-server.mjs PORT
import { createServer } from "node:http";

const body = Buffer.from('{"status":"ready"}');
createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}).listen(Number(process.argv[2]), "127.0.0.1");
