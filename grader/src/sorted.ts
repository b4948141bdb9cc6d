/**
 * Membership in sorted values, for checks that ask whether a value a
 * message carried is one of a set (a rank's gradients, the model's
 * parameters): a binary search, since the sets run to thousands of values
 * and the messages' samples to hundreds.
 */

/** The first index of `sorted` (ascending) whose value is not below `x`; `sorted.length` when none is. */
export function firstAtLeast(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
