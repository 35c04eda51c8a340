// The seam between what is answered (health paths, error pages) and how bytes move (the relay): a request to read, a writer for one whole response.

/** What the endpoints and error pages read of a request. */
export interface RequestView {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly url: string;
  /** The first value of a header, by its lower-case name. */
  header(lowerName: string): string | undefined;
  /** Every line's value of a header joined with ", ": repeated lines are one comma list (RFC 9110 §5.3), so two traceparents are one invalid value. */
  joined(lowerName: string): string | undefined;
}

/** Writes one complete response; the body is left out for HEAD by the writer, never by the caller. */
export interface ResponseWriter {
  /** `headers` as a flat `[name, value, ...]` list, Content-Length included. */
  send(status: number, headers: readonly string[], body: Buffer): void;
}
