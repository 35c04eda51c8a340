// The trace id of a W3C `traceparent` (Trace Context, level 1 §3.2) for the access line's `traceId` (CONTRACT §17): an invalid header gives none (it is still passed on untouched).
/** `version-traceid-parentid-flags`, lowercase hex; a later version may add fields after a `-`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_PARENT_ID = "0".repeat(16);

/**
 * The 32-hex trace id of a valid header, else undefined: version `ff` is forbidden, version `00`
 * has exactly four fields, an all-zero trace id or parent id is invalid (the spec's rules).
 */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined || traceparent.length < 55) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, version, traceId, parentId, rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_PARENT_ID) return undefined;
  return traceId;
}
