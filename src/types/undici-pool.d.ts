// Types for importing undici's Pool, Client and internal symbols by their files: the package index also loads fetch, WebSocket, caches and mocks, which we never use.
declare module "undici/lib/dispatcher/pool.js" {
  import type { Pool } from "undici";
  const PoolClass: typeof Pool;
  export default PoolClass;
}

declare module "undici/lib/dispatcher/client.js" {
  import type { Client } from "undici";
  const ClientClass: typeof Client;
  export default ClientClass;
}

declare module "undici/lib/core/symbols.js" {
  /** Only the two the upstream pool's queue guard reads (see src/readiness/upstream-pool.ts). */
  const symbols: { readonly kQueue: symbol; readonly kPendingIdx: symbol };
  export default symbols;
}
