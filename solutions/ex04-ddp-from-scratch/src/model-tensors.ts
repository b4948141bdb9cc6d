/**
 * What a model holds, as DataParallel needs it (given: you need not change
 * this file).
 *
 * `model.parameters()` lists the tensors that train: those with
 * `requiresGrad`, in declaration order, and a tensor that two layers share
 * (tied weights) once per layer that holds it. A data-parallel wrapper needs
 * two other lists: every tensor the model holds, frozen ones included (the
 * replicas must start from the same values of all of them), and every
 * trainable tensor once.
 */
import { Tensor, nn } from '@dtlab/tensor';

/**
 * Every tensor `model` holds in its fields, in sub-modules and in arrays of
 * them, trainable or frozen (`requiresGrad` false), each tensor once however
 * many layers share it, depth first in declaration order.
 */
export function modelTensors(model: nn.Module): Tensor[] {
  const seen = new Set<Tensor>();
  const visit = (value: unknown): void => {
    if (value instanceof Tensor) seen.add(value);
    else if (value instanceof nn.Module) Object.values(value).forEach(visit);
    else if (Array.isArray(value)) value.forEach(visit);
  };
  visit(model);
  return [...seen];
}

/** `model.parameters()` with each tensor once: a weight tied between two layers is one parameter with one gradient. */
export function uniqueParameters(model: nn.Module): Tensor[] {
  return [...new Set(model.parameters())];
}
