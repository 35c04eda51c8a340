// The bytes every /proc/net socket table is printed in: separators and hex digits, shared by the table parsers.

export const NEWLINE = 0x0a;
export const SPACE = 0x20;
export const TAB = 0x09;
export const COLON = 0x3a;

/** Hex digit value per byte, -1 for anything else; a lookup is cheaper than range checks. */
export const HEX_VALUE = new Int8Array(256).fill(-1);
for (let digit = 0; digit < 10; digit++) HEX_VALUE[0x30 + digit] = digit;
for (let letter = 0; letter < 6; letter++) {
  HEX_VALUE[0x41 + letter] = 10 + letter;
  HEX_VALUE[0x61 + letter] = 10 + letter;
}

/** The index of the first byte at or after `index` that is not a space or tab (or `end`). */
export function skipBlanks(bytes: Buffer, index: number, end: number): number {
  while (index < end && (bytes[index] === SPACE || bytes[index] === TAB)) index++;
  return index;
}

/** A field ends here: the row's end, a space or a tab. */
export function isBlankOrEnd(bytes: Buffer, index: number, end: number): boolean {
  return index === end || bytes[index] === SPACE || bytes[index] === TAB;
}

/** The value of `digits` hex digits at `index`, or -1 if one is not a hex digit (multiplied, not shifted: 8 digits stay positive). */
export function hexAt(bytes: Buffer, index: number, digits: number): number {
  let value = 0;
  for (let offset = 0; offset < digits; offset++) {
    const digit = HEX_VALUE[bytes[index + offset]!]!;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}
