// A memory cgroup for one process, in whichever hierarchy has the memory controller here (v2, v1, or v1 beside v2 on "hybrid" machines): limit, usage, peak, OOM kills.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const V2_MOUNTS = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]; // unified, then the v2 half of a hybrid setup
const V1_MEMORY = "/sys/fs/cgroup/memory";

const read = (path) => readFileSync(path, "utf8");
const words = (path) => (existsSync(path) ? read(path).trim().split(/\s+/) : []);
/** A `key value` line of a flat-keyed file (memory.stat, memory.events, memory.oom_control). */
const keyed = (path, key) => Number(new RegExp(`^${key} (\\d+)$`, "m").exec(read(path))?.[1] ?? NaN);

/** This process's cgroup path in the v2 hierarchy ("0::/x") or in v1's memory one ("4:memory:/x"). */
function ownCgroup(version) {
  const lines = read("/proc/self/cgroup").split("\n");
  const line = version === 2 ? lines.find((entry) => entry.startsWith("0::")) : lines.find((entry) => entry.split(":")[1]?.split(",").includes("memory"));
  return line?.slice(line.indexOf(":", line.indexOf(":") + 1) + 1) ?? "/";
}

/**
 * Where a child cgroup with a memory limit can be made: `{ version, parent }`, or `{ reason }`.
 * The child goes below this process's own cgroup where it can, so that whatever limits the
 * caller is still limits the proxy; else below the hierarchy's root.
 */
export function findMemoryCgroupParent() {
  if (process.getuid?.() !== 0) return { reason: "creating a cgroup needs root" };
  for (const mount of V2_MOUNTS) {
    if (!words(join(mount, "cgroup.controllers")).includes("memory")) continue;
    // A v2 child gets memory.max only if its parent delegates the controller (cgroup.subtree_control).
    const own = join(mount, ownCgroup(2));
    for (const parent of [own, mount]) {
      if (words(join(parent, "cgroup.subtree_control")).includes("memory")) return { version: 2, parent };
    }
    return { reason: `cgroup v2 at ${mount} has the memory controller but does not delegate it to children (cgroup.subtree_control)` };
  }
  if (existsSync(join(V1_MEMORY, "memory.limit_in_bytes"))) {
    const own = join(V1_MEMORY, ownCgroup(1));
    return { version: 1, parent: existsSync(join(own, "memory.limit_in_bytes")) ? own : V1_MEMORY };
  }
  return { reason: "no memory cgroup controller: neither cgroup v2 with memory in cgroup.controllers nor v1's /sys/fs/cgroup/memory" };
}

/**
 * Creates `name` below `parent` with memory limited to `limitBytes` and no swap to escape to.
 * Returns its readers and `remove()`; a process joins it by writing its pid to `procsFile`.
 */
export function createMemoryCgroup({ version, parent }, name, limitBytes) {
  const path = join(parent, name);
  const file = (v2, v1) => join(path, version === 2 ? v2 : v1);
  mkdirSync(path);
  const notes = [];
  try {
    // v1 refuses a memory+swap limit below the memory limit, so memory first.
    writeFileSync(file("memory.max", "memory.limit_in_bytes"), String(limitBytes));
    const swap = file("memory.swap.max", "memory.memsw.limit_in_bytes");
    if (existsSync(swap)) writeFileSync(swap, version === 2 ? "0" : String(limitBytes));
    else notes.push("swap not limited (no swap accounting in this kernel)");
  } catch (error) {
    rmdirSync(path);
    throw error;
  }
  return {
    path,
    version,
    notes,
    procsFile: join(path, "cgroup.procs"),
    /** Charged now: anonymous memory and the page cache the group touched. */
    usageBytes: () => Number(read(file("memory.current", "memory.usage_in_bytes"))),
    /** The kernel's high-water mark, or NaN where it keeps none (v2 before Linux 5.19). */
    peakBytes: () => (existsSync(file("memory.peak", "memory.max_usage_in_bytes")) ? Number(read(file("memory.peak", "memory.max_usage_in_bytes"))) : NaN),
    /** Anonymous memory only: what cannot be dropped the way page cache can. */
    anonBytes: () => keyed(file("memory.stat", "memory.stat"), version === 2 ? "anon" : "rss"),
    /**
     * The kernel's own memory charged to the group: its socket structures and slabs (v1's kmem; v2's
     * "kernel" line, or slab plus sock before Linux 5.18). NaN where the kernel does not say.
     */
    kernelBytes: () => {
      if (version === 1) return existsSync(file("", "memory.kmem.usage_in_bytes")) ? Number(read(file("", "memory.kmem.usage_in_bytes"))) : NaN;
      const stat = file("memory.stat", "");
      const kernel = keyed(stat, "kernel");
      return Number.isNaN(kernel) ? keyed(stat, "slab") + keyed(stat, "sock") : kernel;
    },
    /** Processes the OOM killer killed in this group (NaN where the kernel does not count them). */
    oomKills: () => keyed(file("memory.events", "memory.oom_control"), "oom_kill"),
    /** Removes the group once its processes are gone (they may take a moment to be reaped). */
    async remove() {
      for (let attempt = 0; ; attempt++) {
        try {
          return rmdirSync(path);
        } catch (error) {
          if (error.code !== "EBUSY" || attempt >= 20) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
  };
}

/** "64M" -> bytes; K, M, G are powers of 1024 (as memory.max reads them). */
export function parseBytes(text) {
  const match = /^(\d+)([KMG]?)$/i.exec(text ?? "");
  if (!match) throw new Error(`--memory-limit: expected a size like 64M, got "${text}"`);
  return Number(match[1]) * 1024 ** " KMG".indexOf((match[2] || " ").toUpperCase());
}
