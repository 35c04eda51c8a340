// Parses --readiness-required-http <name>=<url> and --readiness-required-grpc <name>=<host:port>[/<service>] (CONTRACT §15) into check specs, or a usage error naming the input.
import { usageError } from "../errors.js";
import { tcpEndpointOf, type TcpEndpoint } from "./upstream-url.js";

/** `--readiness-required-http <name>=<url>`, validated. */
export interface HttpCheckSpec {
  readonly name: string;
  /** An absolute http URL, as given. */
  readonly url: string;
}

/** `--readiness-required-grpc <name>=<host:port>[/<service>]`, validated. */
export interface GrpcCheckSpec {
  readonly name: string;
  /** `host:port` as given (an IPv6 host in brackets). */
  readonly address: string;
  /** The address parsed once: where the probe connects, and its `:authority`. */
  readonly endpoint: TcpEndpoint;
  /** `""` asks for the server as a whole. */
  readonly service: string;
}

/** At most this many of each kind: each is a probe per TTL, a metric series and a log field. */
export const MAX_NAMED_CHECKS = 8;

/** Lowercase letters, digits and `-`, starting with a letter or digit: safe as a path segment, a metric label and a gRPC service name. */
const CHECK_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** `host:port`: a name or IPv4 address, or an IPv6 address in brackets; the port 1..65535. */
const GRPC_ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/**
 * Names a named check may not take: the built-in checks' (src/readiness/check-results.ts:
 * `upstream`, `shutdown`, `maintenance`, `listener-<port>`; a test holds the two lists together)
 * and the gRPC health service's own (`readyz`, `livez`, `healthz` answer for the whole proxy; a
 * check of that name could never be asked for alone). Written here, at the edge that refuses
 * them, so that the options need nothing from the checks.
 */
export function isReservedCheckName(name: string): boolean {
  return RESERVED_NAMES.has(name) || /^listener-\d+$/.test(name);
}

const RESERVED_NAMES: ReadonlySet<string> = new Set(["upstream", "shutdown", "maintenance", "readyz", "livez", "healthz"]);

/** Splits `<name>=<rest>` and checks the name; `rest` is what follows the first `=`. */
function splitNamed(input: string, value: string, what: string): { name: string; rest: string } {
  const equals = value.indexOf("=");
  if (equals < 0) throw usageError(input, `expected <name>=${what}`, value);
  const name = value.slice(0, equals);
  if (!CHECK_NAME.test(name)) throw usageError(input, "expected a check name of lowercase letters, digits and -", value);
  if (isReservedCheckName(name)) throw usageError(input, "expected a name that is not a built-in check's", value);
  return { name, rest: value.slice(equals + 1) };
}

/** Refuses more than the maximum and a name given twice within one option. */
function checkCountAndNames(input: string, specs: readonly { readonly name: string }[]): void {
  if (specs.length > MAX_NAMED_CHECKS) throw usageError(input, `expected at most ${MAX_NAMED_CHECKS} checks`, `${specs.length} checks`);
  const seen = new Set<string>();
  for (const { name } of specs) {
    if (seen.has(name)) throw usageError(input, "expected each check name once", `${name} twice`);
    seen.add(name);
  }
}

/** `--readiness-required-http` values (flag repeats or the env comma list). */
export function parseHttpChecks(input: string, values: readonly string[]): HttpCheckSpec[] {
  const specs = values.map((value) => {
    const { name, rest } = splitNamed(input, value, "<http URL>");
    let url: URL | undefined;
    try {
      url = new URL(rest);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== "http:" || url.hostname === "") throw usageError(input, "expected <name>=<absolute http:// URL>", value);
    if (url.username !== "" || url.password !== "" || url.hash !== "") throw usageError(input, "expected a URL without credentials or fragment", value);
    return { name, url: rest };
  });
  checkCountAndNames(input, specs);
  return specs;
}

/** `--readiness-required-grpc` values: `<name>=<host:port>` or `<name>=<host:port>/<service>`. */
export function parseGrpcChecks(input: string, values: readonly string[]): GrpcCheckSpec[] {
  const specs = values.map((value) => {
    const { name, rest } = splitNamed(input, value, "<host:port>[/<service>]");
    const slash = rest.indexOf("/");
    const address = slash < 0 ? rest : rest.slice(0, slash);
    const service = slash < 0 ? "" : rest.slice(slash + 1);
    const match = GRPC_ADDRESS.exec(address);
    const port = Number(match?.[2]);
    if (!match || !(port >= 1 && port <= 65535)) throw usageError(input, "expected <name>=<host:port>[/<service>]", value);
    if (/[\s\x00-\x1f]/.test(service)) throw usageError(input, "expected a service name without spaces or control characters", value);
    return { name, address, endpoint: tcpEndpointOf(new URL(`http://${address}`)), service };
  });
  checkCountAndNames(input, specs);
  return specs;
}
