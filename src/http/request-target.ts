// Request targets other than a plain path (RFC 9112 §3.2): absolute-form is accepted as nginx does, `OPTIONS *` is answered here.
import { authorityIsValid } from "./authority.js";

/** An absolute-form target split into what goes upstream: the authority as Host, the path (with query). */
export interface AbsoluteTarget {
  readonly authority: string;
  readonly path: string;
}

/**
 * `http://host[:port][/path][?query]` (https too: the scheme names what the client meant, not
 * how we connect). Userinfo, an authority that fails the one rule (authority.ts: it becomes the
 * app's Host) or another scheme: undefined (a 400). The
 * path is kept byte for byte: no URL parser normalises `..` or `%2F` here.
 */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#@\s]+)([/?][^#\s]*)?$/i;

export function parseAbsoluteTarget(target: string): AbsoluteTarget | undefined {
  const match = ABSOLUTE_FORM.exec(target);
  if (!match || !authorityIsValid(match[1]!)) return undefined;
  const rest = match[2] ?? "";
  return { authority: match[1]!, path: rest.startsWith("/") ? rest : `/${rest}` };
}
