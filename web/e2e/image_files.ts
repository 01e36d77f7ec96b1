// GIF and BMP files written by the test, for formats whose fixtures are all smaller than
// the server's 32-pixel minimum. Both show a simple color gradient.
import type { ImageFile } from "./page_driver";

function color(x: number, y: number, width: number, height: number): [number, number, number] {
  return [Math.round((255 * x) / width), Math.round((255 * y) / height), 128];
}

/** A 24-bit bottom-up Windows bitmap. */
export function bmpFile(name: string, width: number, height: number): ImageFile {
  const rowBytes = Math.ceil((width * 3) / 4) * 4;
  const buffer = Buffer.alloc(54 + rowBytes * height);
  buffer.write("BM", 0, "latin1");
  buffer.writeUInt32LE(buffer.length, 2);
  buffer.writeUInt32LE(54, 10);
  buffer.writeUInt32LE(40, 14);
  buffer.writeInt32LE(width, 18);
  buffer.writeInt32LE(height, 22);
  buffer.writeUInt16LE(1, 26);
  buffer.writeUInt16LE(24, 28);
  buffer.writeUInt32LE(rowBytes * height, 34);
  buffer.writeInt32LE(2835, 38);
  buffer.writeInt32LE(2835, 42);
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * rowBytes;
    for (let x = 0; x < width; x++) {
      const [r, g, b] = color(x, y, width, height);
      buffer.writeUInt8(b, row + x * 3);
      buffer.writeUInt8(g, row + x * 3 + 1);
      buffer.writeUInt8(r, row + x * 3 + 2);
    }
  }
  return { name, mimeType: "image/bmp", buffer };
}

// 128 palette entries make every LZW code 8 bits wide, one byte each, as long as a
// clear code comes before the code table would need a ninth bit.
const PALETTE_BITS = 7;
const CLEAR = 1 << PALETTE_BITS;
const PIXELS_PER_CLEAR = 100;

/** A GIF89a whose pixels are stored without compression (one LZW code per pixel). */
export function gifFile(name: string, width: number, height: number): ImageFile {
  const palette: number[] = [];
  for (let i = 0; i < CLEAR; i++) palette.push(...color(i % 16, Math.floor(i / 16), 16, 8));
  const codes: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if ((y * width + x) % PIXELS_PER_CLEAR === 0) codes.push(CLEAR);
      codes.push(Math.floor((16 * x) / width) + 16 * Math.floor((8 * y) / height));
    }
  }
  codes.push(CLEAR + 1);
  const blocks: number[] = [];
  for (let i = 0; i < codes.length; i += 255) {
    const block = codes.slice(i, i + 255);
    blocks.push(block.length, ...block);
  }
  const header = Buffer.alloc(13);
  header.write("GIF89a", 0, "latin1");
  header.writeUInt16LE(width, 6);
  header.writeUInt16LE(height, 8);
  header.writeUInt8(0xf0 | (PALETTE_BITS - 1), 10);
  const descriptor = Buffer.alloc(10);
  descriptor.writeUInt8(0x2c, 0);
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  const buffer = Buffer.concat([
    header,
    Buffer.from(palette),
    descriptor,
    Buffer.from([PALETTE_BITS, ...blocks, 0, 0x3b]),
  ]);
  return { name, mimeType: "image/gif", buffer };
}
