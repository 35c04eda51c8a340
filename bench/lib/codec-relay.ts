// A proxy made of src/h2-codec alone, both sides, nothing of the product around it (no admission, record or log): the codec's floor in bench section 7, and its real-peer test.
import net from "node:net";
import type { H2Connection, H2ConnectionHandler } from "../../src/h2-codec/h2-connection.js";
import type { H2Stream } from "../../src/h2-codec/h2-stream.js";
import { connectionOnSocket } from "../../src/h2-codec/socket-binding.js";

const clock = performance.now.bind(performance);
const ignore = (): void => {};
const CANCEL = 0x8;

/** A stream's other half: the stream on the other connection, and the octets read here that wait for it to drain before their credit goes back. */
interface Twin {
  readonly stream: H2Stream;
  readonly connection: H2Connection;
  waiting: number;
}

/** The handler of one side: heads, data and trailers go to each stream's twin; credit returns once the twin took the data. */
function relaySide(own: () => H2Connection, open: (stream: H2Stream, fields: string[], neverIndexed: readonly number[], endStream: boolean) => void): H2ConnectionHandler {
  return {
    onHead(stream, fields, neverIndexed, endStream) {
      const twin = stream.user as Twin | undefined;
      if (twin === undefined) return open(stream, fields, neverIndexed, endStream);
      twin.connection.respond(twin.stream, fields, endStream, neverIndexed);
    },
    onOversizedHead: (stream) => own().reset(stream, 0xb),
    onData(stream, source, start, end, endStream) {
      const data = source.subarray(start, end);
      const twin = stream.user as Twin;
      if (twin.connection.sendData(twin.stream, data, endStream)) own().consume(stream, data.length);
      else twin.waiting += data.length;
    },
    onTrailers: (stream, fields) => (stream.user as Twin).connection.sendTrailers((stream.user as Twin).stream, fields),
    onReset: (stream) => (stream.user as Twin | undefined)?.connection.reset((stream.user as Twin).stream, CANCEL),
    onStreamEnd: ignore,
    onWritable(stream) {
      // The twin of `stream` holds what it read while `stream` was full: its credit goes back now.
      const back = stream.user as Twin;
      const mine = back.stream.user as Twin;
      if (mine.waiting > 0) back.connection.consume(back.stream, mine.waiting);
      mine.waiting = 0;
    },
    onGoaway: ignore,
    onClose: ignore,
    onFault: ignore,
  };
}

/** A relay of the codec alone in front of the h2c app at `upstream`, listening on 127.0.0.1:`port` (0: any free port). */
export function startCodecRelay(port: number, upstream: URL): Promise<net.Server> {
  const server = net.createServer((client) => {
    client.setNoDelay(true);
    let app: H2Connection | undefined;
    const appConnection = (): H2Connection => {
      if (app !== undefined && app.canOpenStream) return app;
      const socket = net.connect({ host: upstream.hostname, port: Number(upstream.port) });
      socket.setNoDelay(true);
      const made: H2Connection = connectionOnSocket(socket, relaySide(() => made, ignore), { role: "client", clock }, ignore);
      app = made;
      return made;
    };
    const front = connectionOnSocket(
      client,
      relaySide(
        () => front,
        (stream, fields, neverIndexed, endStream) => {
          const connection = appConnection();
          const out = connection.request(fields, endStream, undefined, neverIndexed);
          stream.user = { stream: out, connection, waiting: 0 } satisfies Twin;
          out.user = { stream, connection: front, waiting: 0 } satisfies Twin;
        },
      ),
      { role: "server", clock },
      ignore,
    );
    client.on("close", () => app?.destroy());
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}
