// Types for importing undici's Pool by its file: the package index also loads fetch, WebSocket, caches and mocks, which we never use.
declare module "undici/lib/dispatcher/pool.js" {
  import type { Pool } from "undici";
  const PoolClass: typeof Pool;
  export default PoolClass;
}
