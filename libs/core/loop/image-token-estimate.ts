/**
 * What an image costs the model, for the gateway's deliberately high prompt
 * estimate. Its base64 bytes say nothing about that: a 200 kB screenshot is
 * a few thousand tokens to a vision model, not the 90 000 its data URL would
 * count at three bytes a token. Vision encoders served by vLLM and SGLang
 * spend about one token per 28×28 pixels (Qwen2-VL and its kin, the most
 * generous of the common ones) up to a cap, so that rate is used on the
 * image's own dimensions, read from its header.
 */

/** Pixels a vision token covers (14-pixel patches merged 2×2). */
const PIXELS_PER_TOKEN_SIDE = 28;
/** At least this much per image: small images are padded and framed. */
export const MIN_IMAGE_TOKENS = 256;
/** Vision encoders resize larger images down: Qwen2-VL's default `max_pixels` is 16 384 tokens. */
export const MAX_IMAGE_TOKENS = 16_384;
/** An image whose size is unknown (a remote URL, an unrecognised format). */
export const UNKNOWN_IMAGE_TOKENS = 2_048;
/** Enough of the base64 to reach a JPEG's frame header behind its EXIF block. */
const HEADER_BASE64_CHARS = 256 * 1024;

export function estimateImageTokens(imageUrl: string): number {
  const size = dataUrlImageSize(imageUrl);
  if (!size) return UNKNOWN_IMAGE_TOKENS;
  const tokens = Math.ceil(size.width / PIXELS_PER_TOKEN_SIDE) * Math.ceil(size.height / PIXELS_PER_TOKEN_SIDE);
  return Math.min(MAX_IMAGE_TOKENS, Math.max(MIN_IMAGE_TOKENS, tokens));
}

/** Width and height of a PNG, JPEG, GIF or WebP given as a base64 data URL; null when unreadable. */
export function dataUrlImageSize(url: string): { width: number; height: number } | null {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0 || !url.slice(0, comma).endsWith(';base64')) return null;
  let head = url.slice(comma + 1, comma + 1 + HEADER_BASE64_CHARS).replace(/\s+/g, '');
  head = head.slice(0, head.length - (head.length % 4));
  const b = Buffer.from(head, 'base64');
  return pngSize(b) ?? gifSize(b) ?? webpSize(b) ?? jpegSize(b);
}

function pngSize(b: Buffer): { width: number; height: number } | null {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function gifSize(b: Buffer): { width: number; height: number } | null {
  if (b.length < 10 || b.toString('latin1', 0, 4) !== 'GIF8') return null;
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function webpSize(b: Buffer): { width: number; height: number } | null {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return null;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  return null;
}

function jpegSize(b: Buffer): { width: number; height: number } | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    // Start-of-frame markers carry the size; C4 (Huffman), C8 and CC (arithmetic coding) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: b.readUInt16BE(at + 7), height: b.readUInt16BE(at + 5) };
    }
    at += 2 + b.readUInt16BE(at + 2);
  }
  return null;
}
