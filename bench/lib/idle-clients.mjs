// Idle keep-alive clients for bench/idle-memory.mjs: N connections, one GET each (HTTP/1.1, or h2c with prior knowledge), then held open; prints "ready N" once every answer is read, exits when stdin closes.
// Usage: node bench/lib/idle-clients.mjs <port> <count> <h1|h2> [path, default /]
import net from "node:net";
const [port, count, proto, path = "/"] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4], process.argv[5]];
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
function frame(type, flags, id, payload) { const b = Buffer.alloc(9 + payload.length); b.writeUIntBE(payload.length,0,3); b[3]=type; b[4]=flags; b.writeUInt32BE(id,5); payload.copy(b,9); return b; }
// :method GET, :scheme http, :path (static / or a literal), :authority 127.0.0.1
const pathField = path === "/" ? Buffer.from([0x84]) : Buffer.concat([Buffer.from([0x44, path.length]), Buffer.from(path)]);
const hdr = Buffer.concat([Buffer.from([0x82,0x86]), pathField, Buffer.from([0x41,9]), Buffer.from("127.0.0.1")]);
const H2REQ = Buffer.concat([PREFACE, frame(4,0,0,Buffer.alloc(0)), frame(1,5,1,hdr)]);
const H1REQ = Buffer.from(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
/** The answer is whole: its head, and as many body octets as its content-length says. */
function answered(acc) {
  const end = acc.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const length = /content-length: *(\d+)/i.exec(acc.subarray(0, end).toString("latin1"));
  return acc.length >= end + 4 + Number(length?.[1] ?? 0);
}
const socks = [];
function one() { return new Promise((res, rej) => {
  const s = net.connect(port, "127.0.0.1"); socks.push(s);
  let acc = Buffer.alloc(0), finished = false, acked = false;
  s.on("connect", () => { s.write(proto === "h2" ? H2REQ : H1REQ); });
  s.on("error", rej);
  s.on("close", () => { if (!finished) rej(new Error("closed early")); });
  s.on("data", (d) => {
    if (proto === "h1") { acc = Buffer.concat([acc, d]); if (answered(acc)) { finished = true; res(); } return; }
    acc = Buffer.concat([acc, d]);
    while (acc.length >= 9) { const len = acc.readUIntBE(0,3); if (acc.length < 9+len) break; const type = acc[3], flags = acc[4], id = acc.readUInt32BE(5);
      if (type === 4 && !(flags & 1) && !acked) { acked = true; s.write(frame(4,1,0,Buffer.alloc(0))); }
      if (id === 1 && (flags & 1) && (type === 0 || type === 1)) { finished = true; res(); }
      acc = acc.subarray(9+len); }
  });
}); }
const BATCH = 200;
for (let i = 0; i < count; i += BATCH) await Promise.all(Array.from({length: Math.min(BATCH, count - i)}, one));
console.log("ready", count);
process.stdin.on("data", () => {}); process.stdin.on("end", () => process.exit(0));
