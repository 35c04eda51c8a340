// The app for the soak: /small (100 bytes), /big (1 MiB), any POST consumed and answered. Usage: node soak-upstream.mjs PORT
import { createServer } from "node:http";

const small = Buffer.alloc(100, 0x61);
const big = Buffer.alloc(1024 * 1024, 0x62);
createServer((req, res) => {
  if (req.method === "POST") {
    let received = 0;
    req.on("data", (chunk) => (received += chunk.length));
    req.on("end", () => res.end(String(received)));
    return;
  }
  res.end(req.url === "/big" ? big : small);
}).listen(Number(process.argv[2]), "127.0.0.1");
