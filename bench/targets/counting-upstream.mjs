// An app for the /readyz bench: answers its health path /ready with 200 and counts the hits; GET /count returns the count. Usage: node counting-upstream.mjs PORT
import { createServer } from "node:http";

let readyHits = 0;
createServer((req, res) => {
  if (req.url === "/count") return res.end(String(readyHits));
  if (req.url === "/ready") readyHits++;
  res.end("ok");
}).listen(Number(process.argv[2]), "127.0.0.1");
