/**
 * Movement ops read the same elements as a naive index mapping, and the view
 * ops (permute, transpose, slice, chunk, unsqueeze, squeeze, expand, and
 * reshape of a contiguous tensor) share storage with their base.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Tensor, arange, chunkBounds, noGrad, tensor } from '../src/index.ts';
import { indices, numel, ravel, unravel } from './support/reference.ts';
import { shapeArb } from './support/arbitraries.ts';

/** A view of a base tensor and where each of its elements lives in the base. */
interface ViewCase {
  label: string;
  apply: (t: Tensor) => Tensor;
  shape: number[];
  /** The base index that output index `idx` reads. */
  source: (idx: number[]) => number[];
  /** False for reshape-like ops, which copy a non-contiguous input. */
  alwaysView: boolean;
}

const permutationOf = (n: number) =>
  fc.array(fc.double({ noNaN: true }), { minLength: n, maxLength: n }).map((keys) => keys.map((_, i) => i).sort((x, y) => keys[x]! - keys[y]! || x - y));

function viewCaseArb(shape: number[]): fc.Arbitrary<ViewCase> {
  const nd = shape.length;
  const cases: fc.Arbitrary<ViewCase>[] = [
    fc.constant({ label: 'reshape to 1-D', apply: (t) => t.reshape(-1), shape: [numel(shape)], source: (idx) => unravel(idx[0]!, shape), alwaysView: false }),
  ];
  if (nd >= 1) {
    cases.push(
      permutationOf(nd).map((perm) => ({
        label: `permute(${perm})`,
        apply: (t) => t.permute(perm),
        shape: perm.map((d) => shape[d]!),
        source: (idx) => {
          const src = new Array<number>(nd);
          perm.forEach((d, i) => (src[d] = idx[i]!));
          return src;
        },
        alwaysView: true,
      })),
      fc.tuple(fc.integer({ min: 0, max: nd - 1 }), fc.integer({ min: 0, max: nd - 1 }), fc.boolean()).map(([a, b, neg]) => {
        const swap = (idx: number[]) => {
          const s = [...idx];
          [s[a], s[b]] = [idx[b]!, idx[a]!];
          return s;
        };
        return {
          label: `transpose(${a}, ${b})`,
          apply: (t: Tensor) => t.transpose(neg ? a - nd : a, b),
          shape: swap(shape),
          source: swap,
          alwaysView: true,
        };
      }),
      fc
        .tuple(fc.integer({ min: 0, max: nd - 1 }), fc.integer({ min: -6, max: 6 }), fc.option(fc.integer({ min: -6, max: 6 })))
        .map(([dim, start, end]) => {
          // Array.prototype.slice has Python's slicing rules: the independent reference.
          const kept = Array.from({ length: shape[dim]! }, (_, i) => i).slice(start, end ?? undefined);
          const out = [...shape];
          out[dim] = kept.length;
          return {
            label: `slice(${dim}, ${start}, ${end})`,
            apply: (t: Tensor) => (end === null ? t.slice(dim, start) : t.slice(dim, start, end)),
            shape: out,
            source: (idx: number[]) => idx.map((v, d) => (d === dim ? kept[v]! : v)),
            alwaysView: true,
          };
        }),
      fc.tuple(fc.integer({ min: 0, max: nd - 1 }), fc.integer({ min: 1, max: 5 }), fc.nat()).map(([dim, parts, pick]) => {
        const size = shape[dim]!;
        const which = pick % parts;
        const big = Math.ceil(size / parts);
        const extra = size % parts;
        const sizes = Array.from({ length: parts }, (_, i) => (extra === 0 ? size / parts : i < extra ? big : big - 1));
        const start = sizes.slice(0, which).reduce((x, y) => x + y, 0);
        const out = [...shape];
        out[dim] = sizes[which]!;
        return {
          label: `chunk(${parts}, ${dim})[${which}]`,
          apply: (t: Tensor) => t.chunk(parts, dim)[which]!,
          shape: out,
          source: (idx: number[]) => idx.map((v, d) => (d === dim ? v + start : v)),
          alwaysView: true,
        };
      }),
      fc.tuple(fc.integer({ min: 0, max: nd - 1 }), fc.integer({ min: 0, max: nd - 1 })).map(([x, y]) => {
        const [s, e] = [Math.min(x, y), Math.max(x, y)];
        const out = [...shape.slice(0, s), numel(shape.slice(s, e + 1)), ...shape.slice(e + 1)];
        return {
          label: `flatten(${s}, ${e})`,
          apply: (t: Tensor) => t.flatten(s, e),
          shape: out,
          source: (idx: number[]) => unravel(ravel(idx, out), shape),
          alwaysView: false,
        };
      }),
    );
  }
  cases.push(
    fc.integer({ min: 0, max: nd }).map((dim) => ({
      label: `unsqueeze(${dim})`,
      apply: (t: Tensor) => t.unsqueeze(dim),
      shape: [...shape.slice(0, dim), 1, ...shape.slice(dim)],
      source: (idx: number[]) => idx.filter((_, d) => d !== dim),
      alwaysView: true,
    })),
    fc.constant({
      label: 'squeeze()',
      apply: (t: Tensor) => t.squeeze(),
      shape: shape.filter((d) => d !== 1),
      source: (idx: number[]) => {
        let k = 0;
        return shape.map((d) => (d === 1 ? 0 : idx[k++]!));
      },
      alwaysView: true,
    }),
  );
  return fc.oneof(...cases);
}

/** A base shape with a view case of it, and a second view case applied on top. */
const viewChainArb = shapeArb({ maxRank: 4, maxDim: 4 }).chain((shape) =>
  viewCaseArb(shape).chain((first) => viewCaseArb(first.shape).map((second) => ({ shape, first, second }))),
);

const baseOf = (shape: number[]) => arange(numel(shape), { dtype: 'float64' }).reshape(shape);

describe('view ops read the elements a naive index mapping predicts', () => {
  it('for one view op of a random shape', () => {
    fc.assert(
      fc.property(
        shapeArb({ maxRank: 4, maxDim: 4 }).chain((shape) => viewCaseArb(shape).map((c) => ({ shape, c }))),
        ({ shape, c }) => {
          const v = c.apply(baseOf(shape));
          expect(v.shape, c.label).toEqual(c.shape);
          expect(v.toArray(), c.label).toEqual(indices(c.shape).map((idx) => ravel(c.source(idx), shape)));
        },
      ),
      { seed: 201, numRuns: 400 },
    );
  });

  it('for two view ops composed (views of strided views)', () => {
    fc.assert(
      fc.property(viewChainArb, ({ shape, first, second }) => {
        const v = second.apply(first.apply(baseOf(shape)));
        expect(v.shape).toEqual(second.shape);
        expect(v.toArray(), `${first.label} then ${second.label}`).toEqual(indices(second.shape).map((idx) => ravel(first.source(second.source(idx)), shape)));
      }),
      { seed: 202, numRuns: 400 },
    );
  });

  it('expand repeats size-1 dims and adds leading dims', () => {
    fc.assert(
      fc.property(
        shapeArb({ maxRank: 3, maxDim: 3 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        shapeArb({ maxRank: 2, minDim: 0, maxDim: 3 }),
        (target, ones, lead) => {
          const shape = target.map((d, i) => (ones[i] ? 1 : d));
          const full = [...lead, ...target];
          const e = baseOf(shape).expand(full);
          expect(e.shape).toEqual(full);
          expect(e.toArray()).toEqual(indices(full).map((idx) => ravel(idx.slice(lead.length).map((v, i) => (shape[i] === 1 ? 0 : v)), shape)));
        },
      ),
      { seed: 203, numRuns: 200 },
    );
  });

  it('expand with -1 keeps that size', () => {
    expect(tensor([[1], [2]]).expand(-1, 3).toArray()).toEqual([1, 1, 1, 2, 2, 2]);
  });
});

describe('views share storage with their base', () => {
  it('writing through a view under noGrad changes exactly the base elements it maps to', () => {
    fc.assert(
      fc.property(viewChainArb, ({ shape, first, second }) => {
        fc.pre(first.alwaysView && second.alwaysView);
        const base = baseOf(shape);
        const v = second.apply(first.apply(base));
        const written = indices(second.shape).map((_, k) => 1000 + k);
        noGrad(() => v.copy_(tensor(written, { dtype: 'float64', shape: second.shape })));
        const expected = base.toArray().map((_, i) => i);
        indices(second.shape).forEach((idx, k) => (expected[ravel(first.source(second.source(idx)), shape)] = written[k]!));
        expect(base.toArray()).toEqual(expected);
      }),
      { seed: 204, numRuns: 300 },
    );
  });

  it('reshape and flatten of a contiguous tensor are views', () => {
    const base = arange(12).reshape(3, 4);
    const flat = base.flatten();
    const r = base.reshape(2, 6);
    noGrad(() => {
      flat.slice(0, 5, 6).fill_(-1);
      r.slice(0, 1, 2).slice(1, 5, 6).fill_(-2);
    });
    expect(base.toArray()).toEqual([0, 1, 2, 3, 4, -1, 6, 7, 8, 9, 10, -2]);
  });

  it('reshape of a non-contiguous tensor is a copy', () => {
    const base = arange(6).reshape(2, 3);
    const r = base.transpose().reshape(6);
    expect(r.toArray()).toEqual([0, 3, 1, 4, 2, 5]);
    noGrad(() => r.fill_(7));
    expect(base.toArray()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('detach shares storage', () => {
    const base = tensor([1, 2, 3]);
    noGrad(() => base.detach().mul_(2));
    expect(base.toArray()).toEqual([2, 4, 6]);
  });
});

describe('contiguous and clone', () => {
  it('contiguous() of any view holds the view elements in row-major order', () => {
    fc.assert(
      fc.property(viewChainArb, ({ shape, first, second }) => {
        const v = second.apply(first.apply(baseOf(shape)));
        const c = v.contiguous();
        expect(c.isContiguous()).toBe(true);
        expect(c.shape).toEqual(v.shape);
        expect(c.toArray()).toEqual(v.toArray());
        // Row-major strides, independently derived.
        const strides = c.shape.map((_, i) => numel(c.shape.slice(i + 1)));
        c.shape.forEach((d, i) => d > 1 && expect(c.strides[i]).toBe(strides[i]));
      }),
      { seed: 205, numRuns: 200 },
    );
  });

  it('contiguous() of a contiguous tensor is the tensor itself', () => {
    const t = arange(6).reshape(2, 3);
    expect(t.contiguous()).toBe(t);
    expect(t.transpose().contiguous()).not.toBe(t);
  });

  it('clone() is a copy that does not share storage', () => {
    const t = arange(4);
    const c = t.clone();
    noGrad(() => c.fill_(9));
    expect(t.toArray()).toEqual([0, 1, 2, 3]);
  });
});

describe('permute', () => {
  it('followed by the inverse permutation is the identity', () => {
    fc.assert(
      fc.property(
        shapeArb({ minRank: 1, maxRank: 5, maxDim: 3 }).chain((shape) => permutationOf(shape.length).map((perm) => ({ shape, perm }))),
        ({ shape, perm }) => {
          const base = baseOf(shape);
          const inverse = perm.map((_, i) => perm.indexOf(i));
          const back = base.permute(perm).permute(inverse);
          expect(back.shape).toEqual(shape);
          expect(back.strides).toEqual(base.strides);
          expect(back.toArray()).toEqual(base.toArray());
        },
      ),
      { seed: 206, numRuns: 200 },
    );
  });

  it('accepts negative dims and a list argument', () => {
    const t = arange(6).reshape(2, 3);
    expect(t.permute([-1, 0]).toArray()).toEqual([0, 3, 1, 4, 2, 5]);
    expect(t.permute(1, 0).shape).toEqual([3, 2]);
  });
});

describe('chunk', () => {
  it('returns `parts` pieces that follow chunkBounds and concatenate back to the input', () => {
    fc.assert(
      fc.property(
        shapeArb({ minRank: 1, maxRank: 3, maxDim: 7 }).chain((shape) =>
          fc.record({ shape: fc.constant(shape), parts: fc.integer({ min: 1, max: 9 }), dim: fc.integer({ min: 0, max: shape.length - 1 }) }),
        ),
        ({ shape, parts, dim }) => {
          const base = baseOf(shape);
          const pieces = base.chunk(parts, dim);
          expect(pieces).toHaveLength(parts);
          const n = shape[dim]!;
          pieces.forEach((p, i) => {
            // The first n % parts pieces get one extra element.
            expect(p.shape[dim]).toBe(Math.floor(n / parts) + (i < n % parts ? 1 : 0));
            expect(p.shape[dim]).toBe(chunkBounds(n, parts)[i]!.end - chunkBounds(n, parts)[i]!.start);
          });
          const back = Tensor.cat(pieces, dim);
          expect(back.shape).toEqual(shape);
          expect(back.toArray()).toEqual(base.toArray());
        },
      ),
      { seed: 207, numRuns: 200 },
    );
  });

  it('splits 10 into 3, 3, 2, 2 (not torch.chunk\'s 3, 3, 3, 1)', () => {
    expect(arange(10).chunk(4).map((p) => p.toArray())).toEqual([[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]);
  });
});

describe('squeeze and unsqueeze', () => {
  it('squeeze(dim) removes only that size-1 dim, and leaves a dim of another size alone', () => {
    const t = arange(3).reshape(1, 3, 1);
    expect(t.squeeze(0).shape).toEqual([3, 1]);
    expect(t.squeeze(-1).shape).toEqual([1, 3]);
    expect(t.squeeze(1).shape).toEqual([1, 3, 1]);
  });

  it('unsqueeze accepts negative dims counted over the new rank', () => {
    expect(arange(3).unsqueeze(-1).shape).toEqual([3, 1]);
    expect(arange(3).unsqueeze(0).shape).toEqual([1, 3]);
  });
});
