// The hand-written health messages against protobufjs (an independent encoder and decoder, test-only): random services, statuses, unknown fields of every wire type, truncations; then the malformed inputs by hand.
import fc from "fast-check";
import protobuf from "protobufjs";
import t from "tap";
import {
  SERVING_STATUS,
  decodeHealthCheckRequest,
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  encodeHealthCheckResponse,
  type ServingStatus,
} from "../../src/grpc/health-messages.js";
import { WireFormatError } from "../../src/grpc/protobuf-wire.js";

// grpc/health/v1/health.proto, as protobufjs's JSON descriptor.
const root = protobuf.Root.fromJSON({
  nested: {
    HealthCheckRequest: { fields: { service: { type: "string", id: 1 } } },
    HealthCheckResponse: {
      fields: { status: { type: "ServingStatus", id: 1 } },
      nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
    },
  },
});
const Request = root.lookupType("HealthCheckRequest");
const Response = root.lookupType("HealthCheckResponse");

/** A field of the message: the known one (field 1 with its own wire type) or any unknown one. */
type Field =
  | { readonly kind: "known"; readonly value: string | number }
  | { readonly kind: "varint"; readonly field: number; readonly value: bigint }
  | { readonly kind: "fixed64"; readonly field: number; readonly value: bigint }
  | { readonly kind: "fixed32"; readonly field: number; readonly value: number }
  | { readonly kind: "bytes"; readonly field: number; readonly value: Uint8Array }
  | { readonly kind: "group"; readonly field: number; readonly inner: readonly Field[] };

/** Field numbers other than 1, small and large (2^29-1 is the largest there is). */
const otherField = fc.oneof(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 2, max: 2 ** 29 - 1 }));

function unknownField(depth: number): fc.Arbitrary<Field> {
  const leaves: fc.Arbitrary<Field>[] = [
    fc.record({ kind: fc.constant("varint" as const), field: otherField, value: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }),
    fc.record({ kind: fc.constant("fixed64" as const), field: otherField, value: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }),
    fc.record({ kind: fc.constant("fixed32" as const), field: otherField, value: fc.integer({ min: 0, max: 2 ** 32 - 1 }) }),
    fc.record({ kind: fc.constant("bytes" as const), field: otherField, value: fc.uint8Array({ maxLength: 40 }) }),
  ];
  if (depth > 0) {
    leaves.push(fc.record({ kind: fc.constant("group" as const), field: otherField, inner: fc.array(unknownField(depth - 1), { maxLength: 3 }) }));
  }
  return fc.oneof(...leaves);
}

function writeFields(writer: protobuf.Writer, fields: readonly Field[], known: (writer: protobuf.Writer, value: string | number) => void): void {
  for (const field of fields) {
    switch (field.kind) {
      case "known":
        known(writer, field.value);
        break;
      case "varint":
        writer.uint32(field.field * 8).uint64(protobuf.util.LongBits.from(field.value.toString()).toLong(true));
        break;
      case "fixed64":
        writer.uint32(field.field * 8 + 1).fixed64(protobuf.util.LongBits.from(field.value.toString()).toLong(true));
        break;
      case "fixed32":
        writer.uint32(field.field * 8 + 5).fixed32(field.value);
        break;
      case "bytes":
        writer.uint32(field.field * 8 + 2).bytes(field.value);
        break;
      case "group":
        writer.uint32(field.field * 8 + 3);
        writeFields(writer, field.inner, known);
        writer.uint32(field.field * 8 + 4);
        break;
    }
  }
}

const service = fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.constantFrom("", "readyz", "livez", "healthz", "listener-15008", "upstream", "shutdown"));
const requestFields = fc.array(fc.oneof(fc.record({ kind: fc.constant("known" as const), value: service }), unknownField(3)), { maxLength: 8 });
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const responseFields = fc.array(fc.oneof(fc.record({ kind: fc.constant("known" as const), value: int32 }), unknownField(3)), { maxLength: 8 });

function encodeRequestWithProtobufjs(fields: readonly Field[]): Uint8Array {
  const writer = protobuf.Writer.create();
  writeFields(writer, fields, (w, value) => w.uint32(10).string(String(value)));
  return writer.finish();
}

function encodeResponseWithProtobufjs(fields: readonly Field[]): Uint8Array {
  const writer = protobuf.Writer.create();
  writeFields(writer, fields, (w, value) => w.uint32(8).int32(Number(value)));
  return writer.finish();
}

/** What our decoder gives, or "error" for a WireFormatError (anything else is a bug and fails the test). */
function ours<T>(decode: () => T): T | "error" {
  try {
    return decode();
  } catch (error) {
    if (error instanceof WireFormatError) return "error";
    throw error;
  }
}

function theirs<T>(decode: () => T): T | "error" {
  try {
    return decode();
  } catch {
    return "error";
  }
}

t.test("HealthCheckRequest: protobufjs's encoding, unknown fields of every wire type and all, decodes to protobufjs's service", async (t) => {
  fc.assert(
    fc.property(requestFields, (fields) => {
      const bytes = encodeRequestWithProtobufjs(fields);
      const expected = (Request.decode(bytes) as unknown as { service: string }).service;
      return decodeHealthCheckRequest(bytes) === expected;
    }),
    { numRuns: 2_000 },
  );
  t.pass("2,000 random requests agree");
});

t.test("HealthCheckRequest: every prefix of a message is refused or read exactly as protobufjs reads it", async (t) => {
  fc.assert(
    fc.property(requestFields, fc.nat(), (fields, cut) => {
      const bytes = encodeRequestWithProtobufjs(fields);
      const prefix = bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length);
      const expected = theirs(() => (Request.decode(prefix) as unknown as { service: string }).service);
      return ours(() => decodeHealthCheckRequest(prefix)) === expected;
    }),
    { numRuns: 2_000 },
  );
  t.pass("2,000 truncations agree");
});

t.test("HealthCheckRequest: ours encoded, protobufjs decodes the same service", async (t) => {
  fc.assert(
    fc.property(service, (name) => (Request.decode(encodeHealthCheckRequest(name)) as unknown as { service: string }).service === name),
    { numRuns: 1_000 },
  );
  t.same([...encodeHealthCheckRequest("")], [], "the default service is the empty message, as protobuf encodes it");
  t.same([...encodeHealthCheckRequest("livez")], [...Request.encode({ service: "livez" }).finish()]);
});

t.test("HealthCheckResponse: ours encoded, protobufjs decodes the same status; byte for byte what protobufjs writes", async (t) => {
  for (const status of Object.values(SERVING_STATUS) as ServingStatus[]) {
    const bytes = encodeHealthCheckResponse(status);
    t.equal((Response.decode(bytes) as unknown as { status: number }).status, status);
    t.same([...bytes], [...Response.encode({ status }).finish()], `status ${status}`);
  }
});

t.test("HealthCheckResponse: protobufjs's encoding, unknown fields, negative and 10-byte enums, decodes to protobufjs's status", async (t) => {
  fc.assert(
    fc.property(responseFields, (fields) => {
      const bytes = encodeResponseWithProtobufjs(fields);
      const expected = (Response.decode(bytes) as unknown as { status: number }).status;
      return decodeHealthCheckResponse(bytes) === expected;
    }),
    { numRuns: 2_000 },
  );
  fc.assert(
    fc.property(responseFields, fc.nat(), (fields, cut) => {
      const bytes = encodeResponseWithProtobufjs(fields);
      const prefix = bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length);
      return ours(() => decodeHealthCheckResponse(prefix)) === theirs(() => (Response.decode(prefix) as unknown as { status: number }).status);
    }),
    { numRuns: 2_000 },
  );
  t.pass("random responses and their truncations agree");
});

t.test("malformed requests are refused, each with a WireFormatError", async (t) => {
  const cases: ReadonlyArray<readonly [string, number[]]> = [
    ["a varint of 11 bytes", [0x18, ...Array<number>(10).fill(0xff), 0x01]],
    ["a 10-byte varint whose last byte is over 1", [0x18, ...Array<number>(9).fill(0xff), 0x02]],
    ["a truncated tag", [0x80]],
    ["a truncated length", [0x0a, 0x80]],
    ["a length past the end", [0x0a, 0x05, 0x61]],
    ["a length of 2^32", [0x0a, 0x80, 0x80, 0x80, 0x80, 0x10]],
    ["field number 0", [0x02, 0x00]],
    ["field number 2^29", [0x82, 0x80, 0x80, 0x80, 0x10, 0x00]],
    ["wire type 6", [0x0e]],
    ["wire type 7", [0x0f]],
    ["an end group alone", [0x1c]],
    ["an end group of another field", [0x1b, 0x24]],
    ["a group without its end", [0x1b, 0x08, 0x01]],
    ["a fixed64 cut short", [0x19, 1, 2, 3]],
    ["a fixed32 cut short", [0x1d, 1, 2]],
    ["a service that is not UTF-8", [0x0a, 0x02, 0xc3, 0x28]],
    ["groups nested 101 deep", [...Array<number>(101).fill(0x1b), ...Array<number>(101).fill(0x1c)]],
  ];
  for (const [name, bytes] of cases) t.throws(() => decodeHealthCheckRequest(Uint8Array.from(bytes)), WireFormatError, name);
  t.equal(decodeHealthCheckRequest(Uint8Array.from([...Array<number>(100).fill(0x1b), ...Array<number>(100).fill(0x1c)])), "", "100 deep is still a message");
  t.equal(decodeHealthCheckRequest(Uint8Array.from([0x08, 0x05, 0x0a, 0x01, 0x61])), "a", "field 1 as a varint is an unknown field, skipped");
  t.equal(decodeHealthCheckRequest(Uint8Array.from([0x0a, 0x01, 0x61, 0x0a, 0x01, 0x62])), "b", "the last field 1 wins");
  t.equal(decodeHealthCheckRequest(Uint8Array.from([0x0a, 0x03, 0xef, 0xbb, 0xbf])), "\ufeff", "a leading BOM is part of the name");
});
