/**
 * Gradient rules, one per recorded op: given the gradient `g` of the op's
 * output, return the gradient of each input (null where none is needed).
 *
 * Rules may return a gradient of the broadcast shape; the engine sums it
 * back to the input's shape (broadcasting in forward is a sum in backward).
 * They run under noGrad and are written with ordinary tensor ops.
 */
import type { Tensor } from '../tensor.ts';
import type { GradContext } from './node.ts';
import { mapBinaryNoGrad, mapNoGrad } from '../ops/pointwise.ts';
import { padSlice } from '../ops/movement.ts';
import { sumTo } from '../ops/reduce.ts';

/** Maps the output gradient to one gradient per input. */
export type GradRule = (g: Tensor, c: GradContext, needs: readonly boolean[]) => (Tensor | null)[];

/** The rules by op name; `record()` takes only these names (OpName), so a misspelt op fails to compile. */
export const gradRules = {
  add: (g) => [g, g],
  sub: (g) => [g, g.neg()],
  mul: (g, c) => [g.mul(c.input(1)), g.mul(c.input(0))],
  div: (g, c) => [g.div(c.input(1)), g.mul(c.output()).div(c.input(1)).neg()],
  // d(a^b)/da = b·a^(b-1);  d(a^b)/db = a^b·ln a.  NOTE: as in torch, d/da is 0 where b = 0
  // (a^0 is constant, though a^(b-1) is infinite at a = 0) and d/db is 0 where a = 0 and b >= 0
  // (0^b is constant there, though ln 0 = -inf): without this, 0·inf puts NaN in the gradient.
  pow: (g, c, needs) => [
    needs[0] ? g.mul(mapBinaryNoGrad(c.input(0), c.input(1), (a, b) => (b === 0 ? 0 : b * a ** (b - 1)), 'pow backward')) : null,
    needs[1] ? g.mul(mapBinaryNoGrad(c.input(0), c.input(1), (a, b) => (a === 0 && b >= 0 ? 0 : a ** b * Math.log(a)), 'pow backward')) : null,
  ],
  neg: (g) => [g.neg()],
  exp: (g, c) => [g.mul(c.output())],
  log: (g, c) => [g.div(c.input(0))],
  sqrt: (g, c) => [g.div(c.output().mul(2))],
  tanh: (g, c) => [g.mul(mapNoGrad(c.output(), (y) => 1 - y * y, 'tanh backward'))],
  relu: (g, c) => [g.mul(mapNoGrad(c.input(0), (x) => (x > 0 ? 1 : 0), 'relu backward'))],
  sigmoid: (g, c) => [g.mul(mapNoGrad(c.output(), (y) => y * (1 - y), 'sigmoid backward'))],
  cast: (g, c) => [g.to(c.opts.dtype as Tensor['dtype'])],
  // NOTE: a reduction's gradient is the output gradient repeated over the reduced dims.
  sum: (g, c) => [g.reshape(c.opts.keepShape as number[]).expand([...c.inputShape(0)])],
  max: (g, c) => [g.reshape(c.opts.keepShape as number[]).expand([...c.inputShape(0)]).mul(c.opts.mask as Tensor)],
  // (A·B)' = G·Bᵀ for A and Aᵀ·G for B
  bmm: (g, c, needs) => [
    needs[0] ? g.matmul(c.input(1).transpose(1, 2)) : null,
    needs[1] ? c.input(0).transpose(1, 2).matmul(g) : null,
  ],
  clone: (g) => [g],
  reshape: (g, c) => [g.reshape([...c.inputShape(0)])],
  permute: (g, c) => {
    const dims = c.opts.dims as number[];
    return [g.permute(dims.map((_, i) => dims.indexOf(i)))];
  },
  slice: (g, c) => [padSlice(g, c.inputShape(0), c.opts.dim as number, c.opts.start as number)],
  expand: (g, c) => [sumTo(g, c.inputShape(0))],
  cat: (g, c) => {
    const { dim, sizes } = c.opts as { dim: number; sizes: number[] };
    let at = 0;
    return sizes.map((n) => g.slice(dim, at, (at += n)));
  },
} satisfies Record<string, GradRule>;

/** The name of an op with a gradient rule: what `record()` accepts. */
export type OpName = keyof typeof gradRules;
