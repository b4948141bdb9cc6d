/**
 * Matrix product with torch.matmul's rules for 1-D, 2-D and 3-D operands.
 * The recorded primitive is `bmm`: two 3-D tensors with equal batch; every
 * other case is reshaping and broadcasting around it, so autograd needs only
 * the one rule.
 */
import { allocate, promoteTypes } from '../dtype.ts';
import { ShapeError, fmtShape } from '../errors.ts';
import { Tensor } from '../tensor.ts';
import { type BatchView, bmmKernel } from '../kernels/matmul.ts';
import { record } from './record.ts';
import { cast } from './pointwise.ts';
import { expand, reshape, squeeze, unsqueeze } from './movement.ts';
import { chargeMatmul } from '../meter/charge.ts';
import { untracked } from '../meter/allocation.ts';

/** The 3-D `t` as a batch of matrices read in place through its strides (transposed and expanded views need no copy). */
function batchView(t: Tensor): BatchView {
  const [sb, sr, sc] = t.strides as [number, number, number];
  return { data: t._storage.data, offset: t.offset, batchStride: sb, rowStride: sr, colStride: sc };
}

/** Batched product of [B,M,K] and [B,K,N] tensors. */
function bmm(a: Tensor, b: Tensor): Tensor {
  const [B, M, K] = a.shape as [number, number, number];
  const N = b.shape[2]!;
  const dtype = promoteTypes(a.dtype, b.dtype);
  const ac = cast(a, dtype);
  const bc = cast(b, dtype);
  const out = allocate(dtype, B * M * N, [B, M, N]);
  // The kernel's packing buffers are its own workspace, not the program's memory.
  untracked(() => bmmKernel(batchView(ac), batchView(bc), out, B, M, K, N));
  return record('bmm', Tensor._fromData(out, [B, M, N]), [a, b]);
}

/**
 * `a @ b`. 1-D·1-D is a dot product; a 1-D operand is treated as a row (left)
 * or column (right) vector and that dim is dropped from the result; a 2-D
 * operand against a 3-D one is broadcast over the batch.
 */
export function matmul(a: Tensor, b: Tensor): Tensor {
  if (!(b instanceof Tensor)) throw new TypeError('matmul: the right operand must be a Tensor');
  if (a.ndim === 0 || b.ndim === 0 || a.ndim > 3 || b.ndim > 3) {
    throw new ShapeError('matmul', [a.shape, b.shape], `supports 1-D, 2-D and 3-D operands, got shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)}`);
  }
  const k1 = a.shape[a.ndim - 1]!;
  const k2 = b.shape[b.ndim === 1 ? 0 : b.ndim - 2]!;
  if (k1 !== k2) {
    throw new ShapeError('matmul', [a.shape, b.shape], `shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)} do not align: ${k1} != ${k2}`);
  }
  let a3 = a.ndim === 1 ? reshape(a, [1, 1, k1]) : a.ndim === 2 ? unsqueeze(a, 0) : a;
  let b3 = b.ndim === 1 ? reshape(b, [1, k2, 1]) : b.ndim === 2 ? unsqueeze(b, 0) : b;
  const batchA = a3.shape[0]!;
  const batchB = b3.shape[0]!;
  if (batchA !== batchB && batchA !== 1 && batchB !== 1) {
    throw new ShapeError('matmul', [a.shape, b.shape], `batch sizes ${batchA} and ${batchB} of ${fmtShape(a.shape)} and ${fmtShape(b.shape)} cannot broadcast`);
  }
  const batch = Math.max(batchA, batchB);
  // 2·m·n·k FLOPs per product; each operand is read once, a broadcast one too.
  chargeMatmul(batch, a3.shape[1]!, k1, b3.shape[2]!, a.numel, b.numel, promoteTypes(a.dtype, b.dtype));
  if (batchA !== batch) a3 = expand(a3, [batch, a3.shape[1]!, k1]);
  if (batchB !== batch) b3 = expand(b3, [batch, k2, b3.shape[2]!]);
  let out = bmm(a3, b3);
  if (a.ndim < 3 && b.ndim < 3) out = squeeze(out, 0);
  if (a.ndim === 1) out = squeeze(out, -2);
  if (b.ndim === 1) out = squeeze(out, -1);
  return out;
}
