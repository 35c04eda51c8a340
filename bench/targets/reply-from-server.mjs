// Peer: fastify with @fastify/reply-from (undici underneath), catch-all route. Usage: node reply-from-server.mjs PORT UPSTREAM_URL
import Fastify from "fastify";
import replyFrom from "@fastify/reply-from";

const [port, base] = process.argv.slice(2);
const app = Fastify({ logger: false });
await app.register(replyFrom, { base, undici: { connections: 256, pipelining: 1 } });
// Pass bodies through untouched instead of parsing them.
app.removeAllContentTypeParsers();
app.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
app.all("/*", (request, reply) => reply.from(request.url));
await app.listen({ port: Number(port), host: "127.0.0.1" });
