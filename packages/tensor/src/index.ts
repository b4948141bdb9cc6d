/**
 * @dtlab/tensor: tensors with reverse-mode autograd, nn, optim, seeded
 * random numbers, flat buffers and parity testing.
 */
export { Tensor, type TensorLike, type TensorOptions, type GradHook, type PostAccumulateGradHook } from './tensor.ts';
export { tensor, zeros, ones, full, zerosLike, arange, randn, rand, uniform, type NestedArray, type TensorDataOptions, type RandomOptions } from './creation.ts';
export { type DType, type TypedArray, allocate, bytesPerElement, dtypeOfArray, promoteTypes } from './dtype.ts';
export { ShapeError, AutogradError } from './errors.ts';
export { noGrad, enableGrad, isGradEnabled } from './autograd/grad-mode.ts';
export { Generator, deriveSeed, GENERATOR_ALGORITHM } from './random.ts';
export { chunkBounds, type ChunkBound } from './split.ts';
export { flattenTensors, unflattenTensors, FlatBuffer } from './flat.ts';
export { toTransferable, fromTransferable, type TransferableTensor } from './transfer.ts';
export { broadcastShapes, numelOf } from './shape.ts';
export * as nn from './nn/index.ts';
export * as optim from './optim/index.ts';
export * as testing from './testing/index.ts';
export * as autograd from './autograd/index.ts';

import { Tensor } from './tensor.ts';
/** Concatenates tensors along `dim` (same as `Tensor.cat`). */
export const cat = (tensors: readonly Tensor[], dim = 0): Tensor => Tensor.cat(tensors, dim);
