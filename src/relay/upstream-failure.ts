// Why a connection to the app failed an exchange, and the log codes the exchanges of every protocol pair report it with.

/** Why an upstream connection failed its exchange; `code` is a Node errno code or an llhttp `HPE_*` one. */
export class UpstreamFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "UpstreamFailure";
    this.code = code;
  }
}

/** The log's `code` for a 504, unchanged from the undici days: operators' queries keep working. */
export const HEAD_TIMEOUT_CODE = "UND_ERR_HEADERS_TIMEOUT";
