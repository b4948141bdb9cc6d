/**
 * How chapter 5's questions print the large numbers of scaling (parameters,
 * tokens, FLOPs): as a mantissa times a power of ten, the way papers write
 * them, rather than as a row of zeros.
 */
import { formatNumber, sig } from '../../../src/authoring.ts';

/** `x` as "1.3·10^9" (or "10^21" for a mantissa of 1), to `digits` significant digits; numbers under 10^5 as they are. */
export function sci(x: number, digits = 3): string {
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) < 1e5) return formatNumber(sig(x, digits));
  const exp = Math.floor(Math.log10(Math.abs(x)));
  let mantissa = sig(x / 10 ** exp, digits);
  let e = exp;
  if (Math.abs(mantissa) >= 10) {
    mantissa = sig(mantissa / 10, digits);
    e += 1;
  }
  return mantissa === 1 ? `10^${e}` : `${formatNumber(mantissa)}·10^${e}`;
}
