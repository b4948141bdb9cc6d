/**
 * Printing tensors the way torch does, abbreviated for large tensors:
 * `tensor([[1.0000, 2.0000], [3.0000, 4.0000]], requiresGrad=true)`.
 */
import type { Tensor } from './tensor.ts';

const EDGE = 3;
const SUMMARIZE_OVER = 1000;

function fmtNumber(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e8) return `${x}.`;
  if (x !== 0 && (Math.abs(x) < 1e-4 || Math.abs(x) >= 1e8)) return x.toExponential(4);
  return x.toFixed(4);
}

/** A torch-like string for `t`: values, then dtype (when float64) and grad info. */
export function formatTensor(t: Tensor): string {
  const data = t.data();
  const summarize = t.numel > SUMMARIZE_OVER;
  const strides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const build = (dim: number, base: number): string => {
    if (dim === t.ndim) return fmtNumber(data[base]!);
    const n = t.shape[dim]!;
    const idx = summarize && n > 2 * EDGE ? [...Array(EDGE).keys(), -1, ...Array.from({ length: EDGE }, (_, i) => n - EDGE + i)] : [...Array(n).keys()];
    const parts = idx.map((i) => (i === -1 ? '...' : build(dim + 1, base + i * strides[dim]!)));
    return `[${parts.join(dim === t.ndim - 1 ? ', ' : ',\n' + ' '.repeat(8 + dim))}]`;
  };
  const extras: string[] = [];
  if (t.dtype === 'float64') extras.push('dtype=float64');
  if (t.gradFn) extras.push(`gradFn=${t.gradFn}`);
  else if (t.requiresGrad) extras.push('requiresGrad=true');
  return `tensor(${build(0, 0)}${extras.map((e) => ', ' + e).join('')})`;
}
