// Preloaded by bench/give-back-cost.mjs: on SIGUSR2 one collection of the kind BENCH_COLLECTION names (none, major, last-resort), timed on stderr.
"use strict";
const v8 = require("node:v8");
const vm = require("node:vm");

let gc;
process.on("SIGUSR2", () => {
  const kind = process.env.BENCH_COLLECTION;
  if (kind === "none") return;
  if (gc === undefined) {
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc");
  }
  const started = process.hrtime.bigint();
  gc(kind === "last-resort" ? { type: "major", flavor: "last-resort" } : { type: "major" });
  process.stderr.write(`collection ${kind}: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(1)} ms\n`);
});
