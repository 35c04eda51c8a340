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
