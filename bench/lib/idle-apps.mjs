// The app behind bench/idle-memory.mjs: "hello" over HTTP/1.1 on one port and over h2c on another.
// Usage: node bench/lib/idle-apps.mjs <http1-port> <h2c-port>
import http from "node:http";
import http2 from "node:http2";

const [http1Port, h2cPort] = process.argv.slice(2).map(Number);
http.createServer({ keepAliveTimeout: 650_000 }, (_request, response) => response.end("hello\n")).listen(http1Port, "127.0.0.1");
http2.createServer((_request, response) => response.end("hello\n")).listen(h2cPort, "127.0.0.1");
