/**
 * Losses and normalisers as functions of tensors.
 */
import { Tensor } from '../tensor.ts';
import { ShapeError, fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import { allocate, bytesPerElement } from '../dtype.ts';
import { charge } from '../meter/charge.ts';

/** Mean squared error `mean((input - target)²)`. */
export function mseLoss(input: Tensor, target: Tensor): Tensor {
  if (!sameShape(input.shape, target.shape)) {
    throw new ShapeError('mseLoss', [input.shape, target.shape], `input ${fmtShape(input.shape)} and target ${fmtShape(target.shape)} must have the same shape`);
  }
  const d = input.sub(target);
  return d.mul(d).mean();
}

/**
 * `log(softmax(x))` along `dim`, computed as `x - max - log(sum(exp(x - max)))`
 * so that large logits do not overflow exp.
 */
export function logSoftmax(x: Tensor, dim = -1): Tensor {
  const shifted = x.sub(x.max(dim, true).detach());
  return shifted.sub(shifted.exp().sum(dim, true).log());
}

/** `exp(x) / sum(exp(x))` along `dim`, stable for large logits. */
export function softmax(x: Tensor, dim = -1): Tensor {
  return logSoftmax(x, dim).exp();
}

/**
 * Cross-entropy of logits [B, C] against class indices (B integers in [0, C)),
 * averaged over the batch: `mean_i(-logSoftmax(x)[i, target_i])`.
 */
export function crossEntropy(logits: Tensor, target: Tensor | readonly number[]): Tensor {
  if (logits.ndim !== 2) throw new ShapeError('crossEntropy', [logits.shape], `expected logits of shape [batch, classes], got ${fmtShape(logits.shape)}`);
  const [B, C] = logits.shape as [number, number];
  const labels = target instanceof Tensor ? target.toArray() : [...target];
  if (labels.length !== B) throw new ShapeError('crossEntropy', [logits.shape], `expected ${B} targets (one per row), got ${labels.length}`);
  // Making the one-hot mask writes B·C elements.
  charge('one_hot', 0, B * C * bytesPerElement(logits.dtype), logits.dtype);
  const onehot = allocate(logits.dtype, B * C, [B, C]);
  labels.forEach((c, i) => {
    if (!Number.isInteger(c) || c < 0 || c >= C) throw new RangeError(`crossEntropy: target ${i} is ${c}, expected a class index in [0, ${C})`);
    onehot[i * C + c] = 1;
  });
  // Picking the target's log-probability is a product with a one-hot mask.
  return logSoftmax(logits, 1).mul(Tensor._fromData(onehot, [B, C])).sum().div(-B);
}
