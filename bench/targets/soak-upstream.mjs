// The app for the soak, HTTP/1.1 and h2c on one port: /small (100 bytes), /big (1 MiB), any POST consumed and answered, gRPC health Check answered SERVING. Usage: node soak-upstream.mjs PORT
import { createServer } from "node:http";
import { createServer as createH2cServer } from "node:http2";
import { createServer as createTcpServer } from "node:net";

const small = Buffer.alloc(100, 0x61);
const big = Buffer.alloc(1024 * 1024, 0x62);
// A gRPC message frame (uncompressed, 2 bytes) of grpc.health.v1.HealthCheckResponse{status: SERVING (1)}.
const serving = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);
// Every h2c connection starts with the client preface; no HTTP/1.1 method starts with "PRI ".
const H2_START = Buffer.from("PRI ");

const http1 = createServer((req, res) => {
  if (req.method === "POST") {
    let received = 0;
    req.on("data", (chunk) => (received += chunk.length));
    req.on("end", () => res.end(String(received)));
    return;
  }
  res.end(req.url === "/big" ? big : small);
});

// The proxy's h2c pool may queue many 1 MiB answers on one session: node's 10 MB default would
// refuse streams here, in the test's app, and count against the proxy.
const h2c = createH2cServer({ maxSessionMemory: 1024 });
h2c.on("stream", (stream, headers) => {
  stream.on("error", () => {}); // a reset stream is the client's business, not the app's
  if (String(headers["content-type"]).startsWith("application/grpc")) {
    // The request message is read and dropped: every call of the soak asks about service "bench".
    stream.resume();
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(serving);
    return;
  }
  let received = 0;
  stream.on("data", (chunk) => (received += chunk.length));
  stream.on("end", () => {
    // node ends the readable side of a reset stream too (a proxy killed mid-upload): nobody to answer.
    if (stream.destroyed || stream.closed) return;
    stream.respond({ ":status": 200 });
    stream.end(headers[":method"] === "POST" ? String(received) : headers[":path"] === "/big" ? big : small);
  });
});

// Each connection goes to one server or the other by its first bytes, which are put back first.
createTcpServer((socket) => {
  let head = Buffer.alloc(0);
  socket.on("error", () => socket.destroy());
  const route = (chunk) => {
    head = Buffer.concat([head, chunk]);
    if (head.length < H2_START.length && H2_START.subarray(0, head.length).equals(head)) return;
    socket.off("data", route);
    socket.pause();
    socket.unshift(head);
    if (head.subarray(0, H2_START.length).equals(H2_START)) {
      h2c.emit("connection", socket); // the session takes what is buffered, then reads the handle itself
    } else {
      http1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", route);
}).listen(Number(process.argv[2]), "127.0.0.1");
