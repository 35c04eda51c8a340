// What makes a response that reached the codec's user malformed (RFC 9113 §8.1.1, §8.2, §8.3.2; RFC 9110 §6.4.1, §8.6), written apart from src/h2-codec/message-checks.ts so that the differential does not grade the codec by its own rules.
import type { UserStream } from "./upstream-clients.js";
import type { Method } from "./upstream-script.js";

const CONNECTION_SPECIFIC = ["connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade"];

/** Why one regular field is malformed, or undefined. */
function fieldProblem(name: string, value: string): string | undefined {
  // §8.2.1: a name is a token (RFC 9110 §5.6.2) in lowercase; §8.2: no uppercase.
  if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name)) return `field name ${JSON.stringify(name)}`;
  // §8.2.1: no NUL, CR or LF in a value, nor space or tab at its start or end.
  if (/[\0\r\n]/.test(value) || /^[ \t]|[ \t]$/.test(value)) return `value of ${name} ${JSON.stringify(value)}`;
  // §8.2.2: connection-specific fields; TE only as "trailers".
  if (CONNECTION_SPECIFIC.includes(name)) return `connection-specific field ${name}`;
  if (name === "te" && value.toLowerCase() !== "trailers") return `te ${JSON.stringify(value)}`;
  return undefined;
}

/** A response head: `:status` first and alone among pseudo-fields (§8.3.2, §8.3), three digits; then regular fields. */
function headProblem(fields: readonly string[], interim: boolean): string | undefined {
  if (fields[0] !== ":status") return "no :status first";
  const status = fields[1] ?? "";
  if (!/^[1-9][0-9]{2}$/.test(status)) return `:status ${JSON.stringify(status)}`;
  if (interim !== status.startsWith("1")) return `${interim ? "interim" : "final"} head with :status ${status}`;
  // 101 is not for HTTP/2 (§8.6); a 1xx carries no content-length (RFC 9110 §8.6).
  if (status === "101") return ":status 101";
  if (interim && contentLengths(fields).length > 0) return "content-length on a 1xx";
  return listProblem(fields, 2);
}

function listProblem(fields: readonly string[], from: number): string | undefined {
  for (let i = from; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.startsWith(":")) return `pseudo-field ${name} ${from === 0 ? "in trailers" : "after :status"}`;
    const problem = fieldProblem(name, fields[i + 1] as string);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** content-length values in a list, as given. */
function contentLengths(fields: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === "content-length") values.push(fields[i + 1] as string);
  return values;
}

/**
 * Why what the codec's user got on one stream is malformed, or undefined. A body before the final
 * head, or trailers without one, is malformed too; so is content on a response that has none
 * (HEAD, 204, 304), and a body that ended short of, or ran past, its content-length (§8.1.1).
 */
export function deliveredProblem(seen: UserStream, method: Method): string | undefined {
  for (const head of seen.interim) {
    const problem = headProblem(head, true);
    if (problem !== undefined) return `interim head: ${problem}`;
  }
  const octets = seen.body.reduce((sum, piece) => sum + piece.length, 0);
  if (seen.head === undefined) return octets > 0 || seen.trailers !== undefined ? "body or trailers without a final head" : undefined;
  const problem = headProblem(seen.head, false);
  if (problem !== undefined) return `head: ${problem}`;
  if (seen.trailers !== undefined) {
    const trailerProblem = listProblem(seen.trailers, 0);
    if (trailerProblem !== undefined) return `trailers: ${trailerProblem}`;
  }
  const status = seen.head[1] as string;
  const lengths = contentLengths(seen.head);
  if (lengths.some((value) => !/^[0-9]+$/.test(value)) || new Set(lengths).size > 1) return `content-length ${JSON.stringify(lengths)}`;
  if (status === "204" && lengths.some((value) => value !== "0")) return "content-length on a 204";
  const noContent = method === "HEAD" || status === "204" || status === "304";
  if (noContent && octets > 0) return `${octets} octets of content on a response without content (${method}, ${status})`;
  if (!noContent && lengths.length > 0) {
    const declared = Number(lengths[0]);
    if (octets > declared || (seen.ended && octets !== declared)) return `${octets} octets${seen.ended ? " and the end" : ""} against content-length ${declared}`;
  }
  return undefined;
}
