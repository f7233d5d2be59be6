// Compares two PNG screenshots of the same size row by row (on the filtered scanlines, no decoder needed):
// how many rows differ. A filter can carry a change one row down, so the count is an upper bound.

import { inflateSync } from 'node:zlib';

function scanlines(png: Buffer): { rows: Buffer[] } {
  let offset = 8;
  let width = 0;
  let height = 0;
  let bytesPerPixel = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    if (type === 'IHDR') {
      width = png.readUInt32BE(offset + 8);
      height = png.readUInt32BE(offset + 12);
      const colorType = png[offset + 17];
      bytesPerPixel = colorType === 6 ? 4 : colorType === 2 ? 3 : colorType === 4 ? 2 : 1;
    }
    if (type === 'IDAT') data.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * bytesPerPixel + 1;
  return { rows: Array.from({ length: height }, (_, y) => raw.subarray(y * stride, (y + 1) * stride)) };
}

export function differingRows(a: Buffer, b: Buffer): number {
  const left = scanlines(a).rows;
  const right = scanlines(b).rows;
  if (left.length !== right.length) return Math.max(left.length, right.length);
  return left.filter((row, y) => !row.equals(right[y] ?? Buffer.alloc(0))).length;
}
