// The exit past a write to stdout stuck in the kernel: process.exit() would wait for that thread-pool thread forever, so the process image becomes our own binary, told by a reserved argument to do nothing but exit with the code.
import { isSea } from "node:sea";

/**
 * The reserved first argument: `readiness-proxy <this> <code>` exits with `code` and does nothing
 * else. Harmless by construction (anyone may run it; all it can do is what `exit 3` does), so it
 * is not a knob: no environment variable, nothing an operator's configuration can set by accident.
 */
const EXIT_ARGUMENT = "--internal-exit-past-stuck-write";

/**
 * Why this and not process.exit(): in the entrypoint form stdout may be a socket the app shares
 * (systemd's journal), written on libuv's thread pool (src/access-log/shared-descriptor-writer.ts).
 * When nobody reads it, one pool thread stays blocked in write(2), and on the way out Node joins
 * every pool thread (uv_library_shutdown), so the exit never ends. Nothing cleaner reaches past
 * that from JavaScript: no _exit(2), no way to interrupt or cancel that write(2) (the description
 * is the app's too; shutdown(2) would end the socket for whoever else writes it), and a worker
 * thread or a writer process would only move the join or cost a process. execve(2) ends every
 * other thread wherever it waits; stdin, stdout and stderr stay open, so the journal loses
 * nothing it already took, and the kubelet sees the same pid exit with the same code.
 *
 * Called from the last 'exit' listener, after the others (the app's group is killed by one).
 * Should execve fail (the binary gone from its path), SIGKILL still ends the process (137) rather
 * than leaving it hung.
 */
export function exitPastStuckWrite(code: number): void {
  const script = isSea() ? [] : process.argv.slice(1, 2);
  // Node 24 has it (since 23.11); the @types/node this project builds with does not know it yet.
  const { execve } = process as { execve?: (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never };
  try {
    if (execve === undefined) throw new Error("no process.execve");
    execve(process.execPath, [process.execPath, ...script, EXIT_ARGUMENT, String(code)], {});
  } catch {
    process.kill(process.pid, "SIGKILL");
  }
}

/** The first thing at start: the image {@link exitPastStuckWrite} made exits with its code, before anything is opened. */
export function exitIfAskedPastStuckWrite(argv: readonly string[]): void {
  if (argv.length !== 2 || argv[0] !== EXIT_ARGUMENT || !/^\d{1,3}$/.test(argv[1]!) || Number(argv[1]) > 255) return;
  process.exit(Number(argv[1]));
}
