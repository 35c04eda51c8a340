// What the upstream received for one case: collected after a barrier request through the proxy, so nothing the case caused is still on its way.
import type { RecordedRequest, RecordingUpstream } from "../helpers/recording-upstream.js";
import { exchange, showBytes } from "./raw-exchange.js";

export interface CaseActivity {
  /** Requests the upstream parsed, the barrier left out. */
  readonly requests: readonly RecordedRequest[];
  /** Every byte the upstream received, the barrier's head left out: empty when nothing was forwarded. */
  readonly bytes: string;
  /** Upstream connections opened since the previous collection. */
  readonly connections: number;
}

let barriers = 0;

/**
 * Sends `GET /__barrier__/<n>` through the proxy on a connection of its own and waits for the
 * upstream's answer, then takes what the upstream received since the last take. Anything the
 * proxy did for the previous connection happened before it accepted this one and forwarded
 * its request: that took several turns of the event loop, in which the upstream read every
 * earlier byte. No timer orders this.
 */
export async function collectAfterBarrier(proxyPort: number, upstream: RecordingUpstream): Promise<CaseActivity> {
  const path = `/__barrier__/${++barriers}`;
  const result = await exchange(proxyPort, { pieces: [Buffer.from(`GET ${path} HTTP/1.1\r\nHost: barrier\r\n\r\n`)], responses: 1, then: "half-close", timeoutMs: 2_000 });
  if (result.finals[0] !== 200) throw new Error(`the barrier request ${path} was not answered: ${showBytes(result.received)}`);
  const activity = upstream.take();
  const barrierHead = new RegExp(`GET ${path} HTTP/1\\.1\\r\\n[^]*?\\r\\n\\r\\n`);
  return {
    requests: activity.requests.filter((request) => request.url !== path),
    bytes: activity.bytes.map((text) => text.replace(barrierHead, "")).join(""),
    connections: activity.connections,
  };
}
