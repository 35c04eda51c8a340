// The codec's one error class: a stable `code` naming the RFC 9113 error the connection must answer with, never branched on by message text.

/** RFC 9113 §7 error codes, as sent in RST_STREAM and GOAWAY. */
export const H2_ERROR = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

/** The errors the codec's pure cores raise: each one ends the connection with GOAWAY of the same name (ENHANCE_YOUR_CALM for a flood). */
export type CodecErrorCode = "COMPRESSION_ERROR" | "FRAME_SIZE_ERROR" | "PROTOCOL_ERROR" | "FLOW_CONTROL_ERROR" | "STREAM_CLOSED" | "ENHANCE_YOUR_CALM";

/**
 * A connection error found by the HPACK decoder or the frame reader. Callers branch on `code` (and
 * send `h2Code` in GOAWAY); the message is for the log only.
 */
export class CodecError extends Error {
  override readonly name = "CodecError";
  /** The RFC 9113 error code number for GOAWAY. */
  readonly h2Code: number;
  constructor(
    readonly code: CodecErrorCode,
    message: string,
  ) {
    super(message);
    this.h2Code = H2_ERROR[code];
  }
}

/** A COMPRESSION_ERROR: the HPACK state is lost, so the connection ends (RFC 9113 §4.3). */
export const compressionError = (message: string) => new CodecError("COMPRESSION_ERROR", message);
