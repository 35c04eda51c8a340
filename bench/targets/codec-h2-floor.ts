// The codec's floor as a proxy: src/relay/http2/codec on both sides with nothing of the product around it (no admission, record, log); what the codec alone costs per request, beside node-h2-floor.mjs.
import net from "node:net";
import type { H2Connection, H2ConnectionHandler } from "../../src/relay/http2/codec/h2-connection.js";
import type { H2Stream } from "../../src/relay/http2/codec/h2-stream.js";
import { connectionOnSocket } from "../../src/relay/http2/codec/socket-binding.js";

const [port, upstreamUrl] = process.argv.slice(2);
const upstream = new URL(upstreamUrl ?? "http://127.0.0.1:80");
const clock = performance.now.bind(performance);
const ignore = (): void => {};

/** Each stream's `user` is its twin on the other connection. */
const twin = (stream: H2Stream): H2Stream => stream.user as H2Stream;

net
  .createServer((client) => {
    client.setNoDelay(true);
    let app: H2Connection | undefined;
    const appConnection = (): H2Connection => {
      if (app !== undefined && app.canOpenStream) return app;
      const socket = net.connect({ host: upstream.hostname, port: Number(upstream.port) });
      socket.setNoDelay(true);
      app = connectionOnSocket(socket, appSide, { role: "client", clock }, ignore);
      return app;
    };
    // The client's side: requests go on to the app as they came.
    const clientSide: H2ConnectionHandler = {
      onHead(stream, fields, neverIndexed, endStream) {
        const out = appConnection();
        stream.user = out.request(fields, endStream, stream, neverIndexed);
      },
      onOversizedHead: (stream) => front.reset(stream, 0xb),
      onData(stream, data, endStream) {
        const out = twin(stream);
        const owner = app!;
        owner.sendData(out, data, endStream);
        front.consume(stream, data.length);
      },
      onTrailers: (stream, fields) => app?.sendTrailers(twin(stream), fields),
      onReset: (stream) => app?.reset(twin(stream), 0x8),
      onWritable: ignore,
      onGoaway: ignore,
      onClose: () => app?.destroy(),
      onFault: ignore,
    };
    // The app's side: answers go back to the client's stream.
    const appSide: H2ConnectionHandler = {
      onHead: (stream, fields, neverIndexed, endStream) => front.respond(twin(stream), fields, endStream, neverIndexed),
      onOversizedHead: ignore,
      onData(stream, data, endStream) {
        front.sendData(twin(stream), data, endStream);
        app?.consume(stream, data.length);
      },
      onTrailers: (stream, fields) => front.sendTrailers(twin(stream), fields),
      onReset: (stream) => front.reset(twin(stream), 0x8),
      onWritable: ignore,
      onGoaway: ignore,
      onClose: ignore,
      onFault: ignore,
    };
    const front = connectionOnSocket(client, clientSide, { role: "server", clock }, ignore);
  })
  .listen(Number(port), "127.0.0.1");
// A normal exit on the bench's SIGTERM, so `--cpu-prof` writes its profile.
process.on("SIGTERM", () => process.exit(0));
