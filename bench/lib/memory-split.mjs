// A process's anonymous memory split by where it lives, from /proc/<pid>/smaps: glibc's main malloc arena ([heap]), anonymous mappings (V8's pages, other arenas, stacks), the rest.
import { readFileSync } from "node:fs";

const MAPPING = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/;
const ANONYMOUS = /^Anonymous:\s+(\d+) kB/;

/**
 * `{ rssAnonMb, mallocMb, mmapMb, otherMb }`. mallocMb is the brk heap, where glibc's main arena
 * serves the main thread's malloc (libuv handles, the HTTP parsers, V8's own malloc); mmapMb is
 * every anonymous mapping without a name: V8's heap pages (256 KiB each), the arenas of other
 * threads, thread stacks. otherMb: anonymous pages of named mappings (the binary's data, [stack]).
 * RssAnon is the kernel's own count, read from status beside it.
 */
export function memorySplit(pid) {
  const kb = { heap: 0, mmap: 0, other: 0 };
  let name;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const mapping = MAPPING.exec(line);
    if (mapping) {
      name = mapping[1];
      continue;
    }
    const anonymous = ANONYMOUS.exec(line);
    if (anonymous === null || name === undefined) continue;
    const size = Number(anonymous[1]);
    if (name === "[heap]") kb.heap += size;
    else if (name === "") kb.mmap += size;
    else kb.other += size;
  }
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return {
    rssAnonMb: Number(/RssAnon:\s+(\d+) kB/.exec(status)?.[1]) / 1024,
    mallocMb: kb.heap / 1024,
    mmapMb: kb.mmap / 1024,
    otherMb: kb.other / 1024,
  };
}
