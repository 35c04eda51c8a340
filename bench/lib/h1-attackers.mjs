// Issue 52's hostile HTTP/1.1 client for the soak: connections that pipeline tiny GETs as fast as the proxy takes them and never read an answer.
import { connect } from "node:net";

const REQUEST = "GET / HTTP/1.1\r\nHost: soak\r\n\r\n";
/** One socket read's worth (64 KiB) of requests per write: before issue 52's fix every one of them waited as a transaction (~770 bytes each). */
const WRITE = Buffer.from(REQUEST.repeat(Math.floor(65_536 / REQUEST.length)));

/**
 * `connections` sockets, each writing 64 KiB of pipelined `GET /` whenever its socket drains, and
 * reading nothing: the proxy must hold each one's requests by their octets and stop reading it
 * once its answers back up. Until `signal`; the proxy cutting a connection is allowed (a new one
 * takes its place).
 */
export function pipelinedUnread(port, signal, connections = 32) {
  let written = 0;
  let cut = 0;
  const sockets = new Set();
  const open = () => {
    if (signal.aborted) return;
    const socket = connect(port, "127.0.0.1");
    sockets.add(socket);
    socket.pause();
    const pump = () => {
      while (!signal.aborted && !socket.destroyed) {
        written += WRITE.length / REQUEST.length;
        if (!socket.write(WRITE)) return;
      }
    };
    socket.on("connect", pump);
    socket.on("drain", pump);
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      if (signal.aborted) return;
      cut++;
      setTimeout(open, 100);
    });
  };
  for (let index = 0; index < connections; index++) open();
  return new Promise((resolve) => {
    const done = () => {
      const note = `${connections} connections, ${written} GETs written, none read; ${cut} cut by the proxy`;
      for (const socket of sockets) socket.destroy();
      resolve({ requests: written, note });
    };
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}
