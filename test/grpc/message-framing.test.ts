// gRPC's length-prefixed framing: one message per unary body, the compressed flag refused as UNIMPLEMENTED, everything else not one message as INVALID_ARGUMENT.
import t from "tap";
import { GRPC_STATUS, encodeGrpcMessage, isGrpcContentType, isNativeGrpcContentType } from "../../src/grpc/grpc-status.js";
import { frameMessage, isFramingError, unframeUnary } from "../../src/grpc/message-framing.js";

t.test("a framed message unframes to itself", async (t) => {
  for (const message of [Buffer.alloc(0), Buffer.from([0x08, 0x01]), Buffer.alloc(70_000, 7)]) {
    const framed = frameMessage(message);
    t.equal(framed[0], 0, "flag 0: not compressed");
    t.equal(framed.readUInt32BE(1), message.length, "big-endian length");
    const unframed = unframeUnary(framed);
    t.notOk(isFramingError(unframed));
    t.same(Buffer.from(unframed as Uint8Array), message);
  }
});

t.test("a body that is not exactly one uncompressed message", async (t) => {
  const one = frameMessage(Buffer.from([0x0a, 0x01, 0x61]));
  const cases: ReadonlyArray<readonly [string, Buffer, number]> = [
    ["empty", Buffer.alloc(0), GRPC_STATUS.INVALID_ARGUMENT],
    ["a prefix cut short", one.subarray(0, 4), GRPC_STATUS.INVALID_ARGUMENT],
    ["a message cut short", one.subarray(0, one.length - 1), GRPC_STATUS.INVALID_ARGUMENT],
    ["two messages", Buffer.concat([one, one]), GRPC_STATUS.INVALID_ARGUMENT],
    ["trailing bytes", Buffer.concat([one, Buffer.from([0])]), GRPC_STATUS.INVALID_ARGUMENT],
    ["flag 2", Buffer.concat([Buffer.from([2]), one.subarray(1)]), GRPC_STATUS.INVALID_ARGUMENT],
    ["a length of 2^32-1", Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1]), GRPC_STATUS.INVALID_ARGUMENT],
    ["compressed", Buffer.concat([Buffer.from([1]), one.subarray(1)]), GRPC_STATUS.UNIMPLEMENTED],
  ];
  for (const [name, body, status] of cases) {
    const result = unframeUnary(body);
    t.ok(isFramingError(result), name);
    if (isFramingError(result)) t.equal(result.status, status, `${name}: grpc-status ${status}`);
  }
});

t.test("content-type: application/grpc*, grpc-web included; native gRPC without it", async (t) => {
  for (const yes of ["application/grpc", "application/grpc+proto", "Application/GRPC+json", "application/grpc;charset=utf-8", "application/grpc-web", "application/grpc-web+proto"]) {
    t.ok(isGrpcContentType(yes), yes);
  }
  for (const no of [undefined, "", "application/json", "application/grpcx", "text/application/grpc"]) t.notOk(isGrpcContentType(no), String(no));
  t.ok(isNativeGrpcContentType("application/grpc+proto"));
  t.notOk(isNativeGrpcContentType("application/grpc-web+proto"), "grpc-web is not native gRPC");
  t.notOk(isNativeGrpcContentType(undefined));
});

t.test("grpc-message is percent-encoded past printable ASCII", async (t) => {
  t.equal(encodeGrpcMessage("upstream unavailable"), "upstream unavailable");
  t.equal(encodeGrpcMessage("100% done"), "100%25 done");
  t.equal(encodeGrpcMessage("a\r\nb é"), "a%0D%0Ab %C3%A9");
});
