// The codec's floor as a proxy (bench/lib/codec-relay.ts) on a port, in front of an h2c app: what the codec alone costs per request, beside node-h2-floor.mjs.
import { startCodecRelay } from "../lib/codec-relay.js";

const [port, upstreamUrl] = process.argv.slice(2);
await startCodecRelay(Number(port), new URL(upstreamUrl ?? "http://127.0.0.1:80"));
// A normal exit on the bench's SIGTERM, so `--cpu-prof` writes its profile.
process.on("SIGTERM", () => process.exit(0));
