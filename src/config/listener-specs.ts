// `--readiness-required-listener` values: `[<name>=]<port>|tcp:<port>|udp:<port>|unix:<path>|unix:@<name>` -> one spec per socket, validated at the edge.
import { usageError } from "../errors.js";
import { isReservedCheckName } from "./named-check-specs.js";

/** The socket kinds a required listener may be; each is read from its own tables. */
export type ListenerKind = "tcp" | "udp" | "unix";

/**
 * A required listener as `missingListeners` and the logs name it: a TCP port as a number
 * (`15008`), any other kind as given (`"udp:53"`, `"unix:/run/app.sock"`).
 */
export type ListenerKey = number | string;

export type RequiredListener =
  | { readonly kind: "tcp" | "udp"; readonly key: ListenerKey; readonly port: number; readonly name: string }
  | { readonly kind: "unix"; readonly key: ListenerKey; /** As /proc/net/unix shows it: the bound path, or `@name` when abstract. */ readonly path: string; readonly name: string };

/** The most `--readiness-required-listener` values, every kind counted (each one is a check and a log field). */
export const MAX_REQUIRED_LISTENERS = 16;

const CHECK_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A key's kind: a number is TCP; the others carry their prefix. */
export function listenerKind(key: ListenerKey): ListenerKind {
  if (typeof key === "number") return "tcp";
  return key.startsWith("udp:") ? "udp" : "unix";
}

/** `listener-15008`, `listener-udp-53`, `listener-unix-fpm-sock` (the basename lowercased, each character outside a-z0-9 a `-`). */
export function defaultListenerName(key: ListenerKey): string {
  if (typeof key === "number") return `listener-${key}`;
  if (key.startsWith("udp:")) return `listener-udp-${key.slice(4)}`;
  const path = key.slice(5);
  const basename = path.slice(path.lastIndexOf("/") + 1);
  return `listener-unix-${basename.toLowerCase().replace(/[^a-z0-9]/g, "-")}`;
}

function parsePort(input: string, text: string, value: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) throw usageError(input, "expected a port 1..65535", value);
  return port;
}

/** One value, named or not. */
function parseOne(input: string, value: string): RequiredListener {
  // `<name>=` only when what precedes `=` is a check name: a unix path may hold `=` itself.
  const named = /^([^=:/]+)=(.*)$/.exec(value);
  const spec = named ? named[2]! : value;
  let listener: RequiredListener;
  if (spec.startsWith("udp:")) {
    const port = parsePort(input, spec.slice(4), value);
    listener = { kind: "udp", key: `udp:${port}`, port, name: "" };
  } else if (spec.startsWith("unix:")) {
    const path = spec.slice(5);
    if (!/^[/@]./.test(path)) throw usageError(input, "expected unix:<absolute path> or unix:@<abstract name>", value);
    listener = { kind: "unix", key: `unix:${path}`, path, name: "" };
  } else {
    const port = parsePort(input, spec.startsWith("tcp:") ? spec.slice(4) : spec, value);
    listener = { kind: "tcp", key: port, port, name: "" };
  }
  if (!named) return { ...listener, name: defaultListenerName(listener.key) };
  const name = named[1]!;
  if (!CHECK_NAME.test(name)) throw usageError(input, "expected a check name of lowercase letters, digits and -", value);
  if (isReservedCheckName(name)) throw usageError(input, "expected a name that is not a built-in check's", value);
  return { ...listener, name };
}

const KIND_ORDER: Readonly<Record<ListenerKind, number>> = { tcp: 0, udp: 1, unix: 2 };

/**
 * Values as given (flag repeats or the env comma list) -> unique, bounded, in check order: TCP
 * ports ascending, then UDP ports ascending, then unix sockets as given.
 */
export function parseRequiredListeners(input: string, values: readonly string[]): RequiredListener[] {
  if (values.length > MAX_REQUIRED_LISTENERS) throw usageError(input, `expected at most ${MAX_REQUIRED_LISTENERS} ports`, `${values.length} ports`);
  const keys = new Set<ListenerKey>();
  const names = new Set<string>();
  const listeners: RequiredListener[] = [];
  for (const value of values) {
    const listener = parseOne(input, value);
    if (keys.has(listener.key)) throw usageError(input, typeof listener.key === "number" ? "expected each port once" : "expected each listener once", `${value} twice`);
    if (names.has(listener.name)) throw usageError(input, "expected each check name once", `${listener.name} twice`);
    keys.add(listener.key);
    names.add(listener.name);
    listeners.push(listener);
  }
  return listeners.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.kind === "unix" ? 0 : (a as { port: number }).port - (b as { port: number }).port));
}

/** The listeners given a name of their own, by key: what the checks need beside the keys. */
export function givenListenerNames(listeners: readonly RequiredListener[]): ReadonlyMap<ListenerKey, string> {
  return new Map(listeners.filter((listener) => listener.name !== defaultListenerName(listener.key)).map((listener) => [listener.key, listener.name]));
}
