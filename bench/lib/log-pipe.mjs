// A FIFO for a server's stdout, drained and counted by this process: log lines cost the writer what they cost under a container runtime (containerd hands a container's stdout over as a FIFO), not what /dev/null costs.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Opens a FIFO: `fd` is its write end, to give a child as stdout (then `closeWriteEnd()`, so
 * the child holds the only writer); every byte written is read here and thrown away, counted by
 * `bytes()`. Writes to /dev/null cost the writer nothing; to a FIFO each one is a copy into the
 * kernel's 64 KiB pipe buffer and a wake-up of the reader, as in production. The reader's own
 * CPU is this process's, not the writer's. `close()` stops reading.
 */
export function openLogPipe() {
  const dir = mkdtempSync(join(tmpdir(), "bench-log-pipe-"));
  const path = join(dir, "stdout");
  let readFd;
  let writeFd;
  try {
    execFileSync("mkfifo", [path]);
    // The read end first, non-blocking (a FIFO's open for writing waits for a reader).
    readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    writeFd = openSync(path, constants.O_WRONLY);
  } catch (error) {
    if (readFd !== undefined) closeSync(readFd);
    throw error;
  } finally {
    // Both ends are open: the name is no longer needed.
    rmSync(dir, { recursive: true, force: true });
  }
  const reader = new Socket({ fd: readFd, readable: true, writable: false });
  let bytes = 0;
  reader.on("data", (chunk) => (bytes += chunk.length));
  reader.on("error", (error) => console.error(`log pipe: ${error.message}`));
  let writeEndOpen = true;
  const closeWriteEnd = () => {
    if (writeEndOpen) closeSync(writeFd);
    writeEndOpen = false;
  };
  return {
    fd: writeFd,
    closeWriteEnd,
    bytes: () => bytes,
    close() {
      closeWriteEnd();
      reader.destroy();
    },
  };
}
