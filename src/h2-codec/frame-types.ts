// RFC 9113's frame type, flag and setting numbers, and the client connection preface.

/** Frame types (RFC 9113 §6). */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags (RFC 9113 §6); ACK shares END_STREAM's bit on SETTINGS and PING. */
export const FLAG = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

/** SETTINGS parameters (RFC 9113 §6.5.2). */
export const SETTING = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** The frame header's size: length (24 bits), type, flags, reserved bit and stream id (31 bits). */
export const FRAME_HEADER_SIZE = 9;
/** SETTINGS_MAX_FRAME_SIZE's initial value and lower bound. */
export const DEFAULT_MAX_FRAME_SIZE = 16384;
/** SETTINGS_MAX_FRAME_SIZE's upper bound, 2^24 - 1. */
export const LARGEST_MAX_FRAME_SIZE = 0xffffff;
/** Every flow-control window's initial size, for a stream and for the connection (RFC 9113 §6.9.2). */
export const DEFAULT_WINDOW = 65535;
/** The largest flow-control window (RFC 9113 §6.9.1). */
export const MAX_WINDOW = 0x7fffffff;

/** The client connection preface (RFC 9113 §3.4), before the client's first SETTINGS. */
export const CLIENT_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
