/**
 * Where a file stops being UTF-8: what a roster saved by a spreadsheet in a
 * Windows or Latin-1 encoding looks like to a UTF-8 reader, found so that the
 * error can name the line and the byte (a decoder would only say "invalid").
 * Well-formed means RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF.
 */

/** The offset of the first byte of `b` that is not part of a well-formed UTF-8 sequence, or null. */
export function firstInvalidUtf8(b: Uint8Array): number | null {
  let i = 0;
  while (i < b.length) {
    const x = b[i]!;
    if (x < 0x80) {
      i++;
      continue;
    }
    // Lead byte: how many continuation bytes follow, and the smallest value (no overlong forms, no surrogates).
    const n = x >= 0xc2 && x <= 0xdf ? 1 : x >= 0xe0 && x <= 0xef ? 2 : x >= 0xf0 && x <= 0xf4 ? 3 : -1;
    if (n < 0 || i + n >= b.length) return i;
    let cp = x & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const y = b[i + k]!;
      if ((y & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (y & 0x3f);
    }
    if ((n === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff))) return i;
    i += n + 1;
  }
  return null;
}
