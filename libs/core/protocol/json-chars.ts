/**
 * The character codes of JSON's structure, the same as UTF-8 bytes and as
 * UTF-16 code units: what the scanners that read JSON without parsing it
 * (the body's shape scan, the upstream echo cut) stop at.
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const COLON = 0x3a;
export const COMMA = 0x2c;
