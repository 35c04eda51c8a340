// A python3 helper that binds a TCP port without listening (so nothing else can take it), then listens and closes on command.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Test } from "tap";

// Node cannot bind without listening; python's socket module can.
const PROGRAM = `
import socket, sys
family = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
s = socket.socket(family, socket.SOCK_STREAM)
s.bind(("::" if family == socket.AF_INET6 else "127.0.0.1", int(sys.argv[2])))
print(s.getsockname()[1], flush=True)
for line in sys.stdin:
    if line.strip() == "listen":
        s.listen(8)
        print("listening", flush=True)
    elif line.strip() == "close":
        s.close()
        print("closed", flush=True)
`;

export interface PortHolder {
  readonly port: number;
  listen(): Promise<void>;
  close(): Promise<void>;
}

/** Whether python3 is here to run the helper. */
export function hasPython(): boolean {
  return spawnSync("python3", ["-c", "pass"]).status === 0;
}

/** Binds `port` (0: any free one) on 127.0.0.1 or [::]; `wrapper` runs it elsewhere, e.g. inside a netns. */
export async function holdPort(t: Test, options: { family?: 4 | 6; port?: number; wrapper?: readonly string[] } = {}): Promise<PortHolder> {
  const argv = [...(options.wrapper ?? []), "python3", "-c", PROGRAM, String(options.family ?? 4), String(options.port ?? 0)];
  const child: ChildProcessWithoutNullStreams = spawn(argv[0]!, argv.slice(1));
  t.teardown(() => {
    child.kill();
  });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve) => (lines.length > 0 ? resolve(lines.shift()!) : waiting.push(resolve)));
  const port = Number(await nextLine());
  const command = async (word: string, reply: string) => {
    child.stdin.write(`${word}\n`);
    const line = await nextLine();
    if (line !== reply) throw new Error(`port holder said ${line}`);
  };
  return { port, listen: () => command("listen", "listening"), close: () => command("close", "closed") };
}
