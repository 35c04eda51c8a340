// One client request's head as llhttp parsed it: what the health endpoints, the error pages and the forwarded head read.
import type { ClientRequest } from "../forward-plan.js";
import { isNamed } from "../header-name.js";
import type { ParsedHead } from "./llhttp-binding.js";

/** A request head; header lookups scan the raw list (a handful of fields, read a few times per request). */
export class RequestHead implements ClientRequest {
  readonly method: string;
  readonly url: string;
  readonly versionMajor: number;
  readonly versionMinor: number;
  /** Flat `[name, value, ...]`, names as the client sent them. */
  readonly headers: readonly string[];
  /** The client allows another request on this connection (HTTP/1.1 default, or 1.0 keep-alive). */
  readonly keepAlive: boolean;
  /** An Upgrade (or CONNECT) request: after its head, the connection may become a tunnel. */
  readonly upgrade: boolean;

  constructor(head: ParsedHead) {
    this.method = head.method;
    this.url = head.url;
    this.versionMajor = head.versionMajor;
    this.versionMinor = head.versionMinor;
    this.headers = head.headers;
    this.keepAlive = head.keepAlive;
    this.upgrade = head.upgrade;
  }

  /** The Host the client sent (the listener has refused an HTTP/1.1 request with none, or two). */
  get authority(): string | undefined {
    return headerValue(this.headers, "host");
  }

  get protocol(): "HTTP/1.1" {
    return "HTTP/1.1";
  }

  /** Content-Length or Transfer-Encoding frames an HTTP/1.1 body: without either, none follows. */
  get unframedBody(): boolean {
    return false;
  }

  /** Every value of a header joined with ", " (as node:http's `req.headers` joins them), or undefined. */
  joined(lowerName: string): string | undefined {
    let joined: string | undefined;
    for (let index = 0; index < this.headers.length; index += 2) {
      const name = this.headers[index]!;
      if (isNamed(name, lowerName)) joined = joined === undefined ? this.headers[index + 1]! : `${joined}, ${this.headers[index + 1]!}`;
    }
    return joined;
  }

  /** How many lines of a header (`lowerName` in lower case) the request has. */
  count(lowerName: string): number {
    let count = 0;
    for (let index = 0; index < this.headers.length; index += 2) {
      const name = this.headers[index]!;
      if (isNamed(name, lowerName)) count++;
    }
    return count;
  }

  /** The first value of a header (`lowerName` in lower case), or undefined. */
  header(lowerName: string): string | undefined {
    return headerValue(this.headers, lowerName);
  }
}

/** The first value of a header in a flat `[name, value, ...]` list (`lowerName` in lower case), or undefined. */
export function headerValue(headers: readonly string[], lowerName: string): string | undefined {
  for (let index = 0; index < headers.length; index += 2) {
    if (isNamed(headers[index]!, lowerName)) return headers[index + 1];
  }
  return undefined;
}
