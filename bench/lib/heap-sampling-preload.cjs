// Preload for bench/relay-profile.mjs --heap and bench/grpc-profile.mjs --heap: V8's sampling heap profiler, keeping the objects minor and major GCs collected (garbage is what a request costs), from the first SIGUSR2 to the second.
const { renameSync, writeFileSync } = require("node:fs");
const { Session } = require("node:inspector");

const output = process.env.BENCH_HEAP_PROFILE;
const session = new Session();
session.connect();
session.post("HeapProfiler.enable");
let sampling = false;
process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.startSampling", { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_SURVIVORS !== "1" });
    return;
  }
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error) console.error(`heap sampling: ${error.message}`);
    else {
      // Whole or not at all: a reader polling for the file never sees half of it.
      writeFileSync(`${output}.part`, JSON.stringify(result.profile));
      renameSync(`${output}.part`, output);
    }
  });
});
