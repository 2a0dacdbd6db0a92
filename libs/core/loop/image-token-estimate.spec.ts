import { MAX_IMAGE_TOKENS, MIN_IMAGE_TOKENS, UNKNOWN_IMAGE_TOKENS, dataUrlImageSize, estimateImageTokens } from './image-token-estimate.js';
import { estimateItemTokens } from './model-context.service.js';

const url = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`;

function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(b, 0);
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

function jpeg(width: number, height: number): Buffer {
  // SOI, an APP0 segment to skip, then a baseline frame header.
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

function webpVp8x(width: number, height: number): Buffer {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.write('WEBPVP8X', 8, 'latin1');
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

describe('image token estimate', () => {
  it.each([
    ['image/png', png(800, 600)],
    ['image/jpeg', jpeg(800, 600)],
    ['image/gif', gif(800, 600)],
    ['image/webp', webpVp8x(800, 600)],
  ])('reads the size of a %s', (mime, bytes) => {
    expect(dataUrlImageSize(url(mime, bytes))).toEqual({ width: 800, height: 600 });
  });

  it('counts one token per 28x28 pixels, within bounds', () => {
    expect(estimateImageTokens(url('image/png', png(280, 560)))).toBe(MIN_IMAGE_TOKENS);
    expect(estimateImageTokens(url('image/png', png(1120, 1120)))).toBe(1600);
    expect(estimateImageTokens(url('image/png', png(20_000, 20_000)))).toBe(MAX_IMAGE_TOKENS);
    expect(estimateImageTokens('https://example.com/a.png')).toBe(UNKNOWN_IMAGE_TOKENS);
    expect(estimateImageTokens('data:image/png;base64,not-an-image')).toBe(UNKNOWN_IMAGE_TOKENS);
  });

  it.each([1, 10, 100])('an item with a %i00 kB image costs the image, not its base64', (hundredsOfKb) => {
    const image = url('image/png', Buffer.concat([png(1120, 1120), Buffer.alloc(hundredsOfKb * 100_000)]));
    const tokens = estimateItemTokens({ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: image }] });
    expect(tokens).toBeGreaterThanOrEqual(1600);
    expect(tokens).toBeLessThan(1650);
  });
});
