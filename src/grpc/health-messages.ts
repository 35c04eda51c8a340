// grpc.health.v1's two messages by hand: HealthCheckRequest (field 1, `service`) and HealthCheckResponse (field 1, `status`), no protobuf runtime.
import { frameMessage } from "./message-framing.js";
import { WIRE_LENGTH_DELIMITED, WIRE_VARINT, WireFormatError, WireReader, encodeTag, encodeVarint } from "./protobuf-wire.js";

/** The two methods' paths (HTTP/2 :path). */
export const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";
export const HEALTH_WATCH_PATH = "/grpc.health.v1.Health/Watch";

/** HealthCheckResponse.ServingStatus. */
export const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
export type ServingStatus = (typeof SERVING_STATUS)[keyof typeof SERVING_STATUS];

/** The enum's names, for reasons and logs; a value outside the enum has none. */
export function servingStatusName(status: number): string | undefined {
  return (Object.keys(SERVING_STATUS) as (keyof typeof SERVING_STATUS)[]).find((name) => SERVING_STATUS[name] === status);
}

const SERVICE_FIELD = 1;
const STATUS_FIELD = 1;
/** proto3 strings must be UTF-8; protobuf-go refuses one that is not, and so do we. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The `service` of a HealthCheckRequest. Unknown fields are skipped; field 1 under another wire
 * type is an unknown field too (what protobuf-go and C++ do); the last field 1 wins. Throws
 * WireFormatError for anything that is not a message.
 */
export function decodeHealthCheckRequest(bytes: Uint8Array): string {
  const reader = new WireReader(bytes);
  let service = "";
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === SERVICE_FIELD && tag.wireType === WIRE_LENGTH_DELIMITED) {
      try {
        service = UTF8.decode(reader.lengthDelimited());
      } catch (error) {
        if (error instanceof WireFormatError) throw error;
        throw new WireFormatError("service is not UTF-8");
      }
    } else {
      reader.skip(tag);
    }
  }
  return service;
}

/** A HealthCheckRequest for `service` (`""` is the default, so it is an empty message). */
export function encodeHealthCheckRequest(service: string): Buffer {
  if (service === "") return Buffer.alloc(0);
  const value = Buffer.from(service, "utf8");
  return Buffer.concat([Buffer.from([...encodeTag(SERVICE_FIELD, WIRE_LENGTH_DELIMITED), ...encodeVarint(value.length)]), value]);
}

/** Prepared once: the four answers the proxy ever sends. */
const RESPONSES: readonly Buffer[] = [0, 1, 2, 3].map((status) =>
  status === 0 ? Buffer.alloc(0) : Buffer.from([...encodeTag(STATUS_FIELD, WIRE_VARINT), status]),
);

/** A HealthCheckResponse (UNKNOWN, the default, is the empty message). */
export function encodeHealthCheckResponse(status: ServingStatus): Buffer {
  return RESPONSES[status]!;
}

const FRAMED_RESPONSES: readonly Buffer[] = RESPONSES.map((message) => frameMessage(message));

/** A HealthCheckResponse length-prefixed for the wire: framed once, shared by every stream. */
export function framedHealthCheckResponse(status: ServingStatus): Buffer {
  return FRAMED_RESPONSES[status]!;
}

/**
 * The `status` of a HealthCheckResponse, as the number sent (an open enum: a value past
 * SERVICE_UNKNOWN is kept, and the caller treats it as not serving). Throws WireFormatError.
 */
export function decodeHealthCheckResponse(bytes: Uint8Array): number {
  const reader = new WireReader(bytes);
  let status = 0;
  while (!reader.done) {
    const tag = reader.tag();
    if (tag.field === STATUS_FIELD && tag.wireType === WIRE_VARINT) {
      status = reader.int32();
    } else {
      reader.skip(tag);
    }
  }
  return status;
}
