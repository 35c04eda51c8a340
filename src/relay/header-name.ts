// A field name compared with a lower-case one without making a lower-cased copy: the per-field test of both protocols' head passes (toLowerCase made a string for every capitalised name).

/**
 * Whether `name` (as sent, any case) is `lowerName` (lower-case ASCII). Field names are tokens
 * (RFC 9110 §5.1: ASCII only, llhttp and the h2 codec refuse others), so folding A-Z is all
 * toLowerCase would have done to a name that can match.
 */
export function isNamed(name: string, lowerName: string): boolean {
  const length = lowerName.length;
  if (name.length !== length) return false;
  for (let index = 0; index < length; index++) {
    const code = name.charCodeAt(index);
    if ((code >= 0x41 && code <= 0x5a ? code | 0x20 : code) !== lowerName.charCodeAt(index)) return false;
  }
  return true;
}
