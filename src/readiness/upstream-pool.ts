// The health probe's connection pool: undici's Pool, with a guard so that an aborted request never opens a connection of its own (undici#5845).
import type { Pool } from "undici";
// Pool and Client alone, not the undici index: the index loads fetch, WebSocket, caches and
// mocks too, and loading them was most of the binary's start-up time.
import ClientClass from "undici/lib/dispatcher/client.js";
import PoolClass from "undici/lib/dispatcher/pool.js";
import symbols from "undici/lib/core/symbols.js";

/** What the queue guard touches of a Client's internals (undici 7's own symbols). */
interface ClientQueue {
  [key: symbol]: unknown;
}

/**
 * When the proxy aborts a request whose client went away, undici destroys that connection
 * with an informational error, puts the aborted request back at the head of the pending
 * queue, and opens a new connection for it before noticing it was aborted: one useless
 * connection to the app per vanished client (200 SSE clients dropped by a load balancer
 * became 400 upstream connections). Upstream fix proposed in nodejs/undici#5846, not in any
 * undici 7 release. The client emits `disconnect` synchronously just before it resumes its
 * queue, so dropping aborted requests from the head of the pending queue there is the same
 * change made from outside. Remove once the pinned undici has the fix.
 */
function dropAbortedPending(client: ClientQueue): void {
  const queue = client[symbols.kQueue] as Array<{ aborted?: boolean } | null>;
  const pending = client[symbols.kPendingIdx] as number;
  while (pending < queue.length && queue[pending]?.aborted === true) queue.splice(pending, 1);
}

export interface UpstreamPoolOptions {
  readonly headersTimeout: number;
  readonly keepAliveTimeout: number;
  readonly connections?: number;
  /** Connect to this unix socket instead of the origin's host and port. */
  readonly socketPath?: string | undefined;
}

/** A Pool for `origin` whose clients carry the guard above. */
export function createUpstreamPool(origin: string, options: UpstreamPoolOptions): Pool {
  return new PoolClass(origin, {
    // Streams (SSE, long uploads) may run for minutes: no body timeout; the head has its own.
    bodyTimeout: 0,
    headersTimeout: options.headersTimeout,
    keepAliveTimeout: options.keepAliveTimeout,
    keepAliveMaxTimeout: options.keepAliveTimeout,
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    ...(options.socketPath === undefined ? {} : { connect: { socketPath: options.socketPath } }),
    factory: (factoryOrigin, clientOptions) => {
      const client = new ClientClass(factoryOrigin, clientOptions);
      client.on("disconnect", () => dropAbortedPending(client as unknown as ClientQueue));
      return client;
    },
  });
}
