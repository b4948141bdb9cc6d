/**
 * fast-check arbitraries for shapes: small ranks and sizes (including 0 and 1)
 * so that every property runs many cases quickly.
 */
import fc from 'fast-check';

/** A shape of rank `minRank..maxRank` with sizes `minDim..maxDim`. */
export function shapeArb({ minRank = 0, maxRank = 4, minDim = 0, maxDim = 4 } = {}): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: minDim, max: maxDim }), { minLength: minRank, maxLength: maxRank });
}

/**
 * Two shapes that broadcast together: draw the result shape, then make each
 * operand from a suffix of it with some sizes replaced by 1.
 */
export const broadcastPairArb: fc.Arbitrary<[number[], number[]]> = shapeArb({ maxRank: 4, maxDim: 3 }).chain((out) => {
  const operand = fc
    .tuple(fc.integer({ min: 0, max: out.length }), fc.array(fc.boolean(), { minLength: out.length, maxLength: out.length }))
    .map(([drop, ones]) => out.map((d, i) => (ones[i] ? 1 : d)).slice(drop));
  return fc.tuple(operand, operand);
});

/**
 * Two shapes that cannot broadcast: equal rank-aligned tails except one
 * position where the sizes differ and neither is 1.
 */
export const incompatiblePairArb: fc.Arbitrary<[number[], number[]]> = fc
  .tuple(
    shapeArb({ maxRank: 3, minDim: 1, maxDim: 3 }),
    shapeArb({ maxRank: 2, minDim: 1, maxDim: 3 }),
    fc.constantFrom(0, 2, 3, 4),
    fc.constantFrom(0, 2, 3, 4),
    fc.boolean(),
  )
  .filter(([, , x, y]) => x !== y)
  .map(([lead, tail, x, y, swap]) => {
    const a = [...lead, x, ...tail];
    const b = [y, ...tail];
    return swap ? [b, a] : [a, b];
  });
