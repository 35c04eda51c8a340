// Bench-only preload (`node --require`) for the daemon's bundle: heap allocation, GC pauses, the memory the runtime reports and, with BENCH_EVENT_LOOP_DELAY=1, an event-loop delay histogram, written to BENCH_STATS_FILE on each SIGUSR2.
"use strict";
const { writeFileSync } = require("node:fs");
const { GCProfiler, getHeapSpaceStatistics, getHeapStatistics } = require("node:v8");
const { PerformanceObserver, monitorEventLoopDelay, performance } = require("node:perf_hooks");

const file = process.env.BENCH_STATS_FILE;
if (!file) throw new Error("runtime-stats-preload: BENCH_STATS_FILE is not set");

// Node 24's getHeapStatistics() has no total_allocated_bytes, so allocation is counted from V8's
// own heap statistics around each GC (GCProfiler): what the heap grew by between the end of one
// GC and the start of the next, summed, plus what it grew by since the last one. Bytes that were
// allocated and freed inside one GC cycle are all counted, since a scavenge frees them all at once.
let profiler = new GCProfiler();
profiler.start();
let allocated = 0;
let usedAfterLastGc = getHeapStatistics().used_heap_size;
const pauses = {}; // gcType -> { count, micros }
const absorb = () => {
  const { statistics } = profiler.stop();
  profiler = new GCProfiler();
  profiler.start();
  for (const gc of statistics) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - usedAfterLastGc);
    usedAfterLastGc = gc.afterGC.heapStatistics.usedHeapSize;
    const kind = (pauses[gc.gcType] ??= { count: 0, micros: 0 });
    kind.count++;
    kind.micros += gc.cost;
  }
};

// Each GC's start (epoch ms, the clock the bench's client stamps requests with) and duration, for
// the correlation of slow requests with collections; at most the last 200,000.
const gcEvents = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (gcEvents.length >= 200_000) gcEvents.shift();
    gcEvents.push([performance.timeOrigin + entry.startTime, entry.duration, entry.detail?.kind ?? entry.kind]);
  }
}).observe({ entryTypes: ["gc"] });

// 1 ms is the finest resolution the histogram takes; it samples with a timer of its own, so it is
// off unless asked for (its wake-ups would be in every other measurement).
const delay = process.env.BENCH_EVENT_LOOP_DELAY === "1" ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
delay?.enable();

/**
 * What the runtime itself reports, in bytes: V8's heap (committed and used, by space), memory
 * outside it that V8 is told of (external, of which ArrayBuffers), and V8's own malloc. Read as
 * is, no GC forced: the point is what the process holds, garbage included.
 */
function memory() {
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  const spaces = {};
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_size > 0) spaces[space.space_name] = { committed: space.physical_space_size, used: space.space_used_size };
  }
  return { heapCommitted: heap.total_physical_size, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers, v8Malloced: heap.malloced_memory, spaces };
}

let sequence = 0;
process.on("SIGUSR2", () => {
  absorb();
  const now = getHeapStatistics().used_heap_size;
  const snapshot = {
    sequence: ++sequence,
    allocatedBytes: allocated + Math.max(0, now - usedAfterLastGc),
    pauses,
    gcEvents: gcEvents.splice(0),
    memory: memory(),
    eventLoopDelay: delay && {
      count: delay.count,
      minUs: delay.min / 1000,
      p50Us: delay.percentile(50) / 1000,
      p99Us: delay.percentile(99) / 1000,
      p999Us: delay.percentile(99.9) / 1000,
      maxUs: delay.max / 1000,
      meanUs: delay.mean / 1000,
    },
  };
  delay?.reset();
  writeFileSync(file, JSON.stringify(snapshot));
});
