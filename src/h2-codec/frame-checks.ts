// The frame rules that need only a frame's header or its own payload (RFC 9113 §6): fixed sizes, the stream ids each type may use, SETTINGS values.
import { CodecError } from "./codec-error.js";
import { FLAG, FRAME, LARGEST_MAX_FRAME_SIZE, DEFAULT_MAX_FRAME_SIZE, MAX_WINDOW, SETTING } from "./frame-types.js";

const protocolError = (message: string) => new CodecError("PROTOCOL_ERROR", message);
const frameSizeError = (message: string) => new CodecError("FRAME_SIZE_ERROR", message);

/** The payload size each fixed-size type must have; -1 where any is allowed. */
const FIXED_LENGTH: readonly number[] = [-1, -1, 5, 4, -1, -1, 8, -1, 4, -1];
/** Types that belong to the connection (stream 0) rather than to a stream. */
const ON_CONNECTION: readonly boolean[] = [false, false, false, false, true, false, true, true, false, false];
const NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"];

/**
 * Throws the connection error a known frame type's header alone shows: a size its type cannot
 * have, or a stream id its type may not use. PUSH_PROMISE is always refused: we never enable push,
 * and a client may not push (RFC 9113 §8.4). WINDOW_UPDATE goes on either. A frame that breaks
 * both kinds of rule gets the size's FRAME_SIZE_ERROR, as from nghttp2, which checks sizes as it
 * reads a frame's header and stream ids once the frame is whole (the session differential fuzz
 * found a SETTINGS ACK with a payload on stream 1 answered PROTOCOL_ERROR here, FRAME_SIZE_ERROR
 * there).
 */
export function checkFrameHeader(type: number, flags: number, streamId: number, length: number): void {
  const name = NAMES[type] as string;
  if (type === FRAME.PUSH_PROMISE) throw protocolError("PUSH_PROMISE received: push is disabled");
  const fixed = FIXED_LENGTH[type] as number;
  if (fixed >= 0 && length !== fixed) throw frameSizeError(`${name} of ${length} octets: it takes ${fixed}`);
  if (type === FRAME.SETTINGS) {
    if (flags & FLAG.ACK && length !== 0) throw frameSizeError(`SETTINGS ACK with ${length} octets of payload`);
    if (length % 6 !== 0) throw frameSizeError(`SETTINGS of ${length} octets: not a multiple of 6`);
  }
  if (type === FRAME.GOAWAY && length < 8) throw frameSizeError(`GOAWAY of ${length} octets: it takes at least 8`);
  if (type === FRAME.DATA && flags & FLAG.PADDED && length < 1) throw frameSizeError("padded DATA without a pad length");
  if (type !== FRAME.WINDOW_UPDATE) {
    if (ON_CONNECTION[type] === true && streamId !== 0) throw protocolError(`${name} on stream ${streamId}: it belongs to stream 0`);
    if (ON_CONNECTION[type] === false && streamId === 0) throw protocolError(`${name} on stream 0`);
  }
}

/** Throws the connection error a SETTINGS payload's values earn (RFC 9113 §6.5.2); unknown settings are ignored. */
export function checkSettings(entries: Buffer, start: number, end: number): void {
  for (let at = start; at < end; at += 6) {
    const id = entries.readUInt16BE(at);
    const value = entries.readUInt32BE(at + 2);
    if (id === SETTING.ENABLE_PUSH && value > 1) throw protocolError(`SETTINGS_ENABLE_PUSH of ${value}`);
    if (id === SETTING.INITIAL_WINDOW_SIZE && value > MAX_WINDOW) throw new CodecError("FLOW_CONTROL_ERROR", `SETTINGS_INITIAL_WINDOW_SIZE of ${value}`);
    if (id === SETTING.MAX_FRAME_SIZE && (value < DEFAULT_MAX_FRAME_SIZE || value > LARGEST_MAX_FRAME_SIZE)) throw protocolError(`SETTINGS_MAX_FRAME_SIZE of ${value}`);
  }
}
