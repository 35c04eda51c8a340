// node:sea's getRawAsset (Node 20.12 and later), which @types/node 20 does not declare yet.
declare module "node:sea" {
  /** The asset's bytes where the executable holds them, not copied; not to be written to. */
  function getRawAsset(key: string): ArrayBuffer;
}
