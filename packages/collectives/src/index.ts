/**
 * @dtlab/collectives: reference collectives built only on the runtime's
 * point-to-point Comm, with torch.distributed's semantics, and their costs.
 */
export { allReduce, type AllReduceOptions, type AllReduceAlgorithm } from './all-reduce.ts';
export { reduceScatter, type ReduceScatterOptions } from './reduce-scatter.ts';
export { allGather, type AllGatherOptions } from './all-gather.ts';
export { broadcast, type BroadcastOptions } from './broadcast.ts';
export { reduce, type ReduceOptions } from './reduce.ts';
export { gather, type GatherOptions } from './gather.ts';
export { scatter, type ScatterOptions } from './scatter.ts';
export { allToAll } from './all-to-all.ts';
export { barrier } from './barrier.ts';
export { estimateTime, DEFAULT_ALGORITHM, type CostedOp, type EstimateOptions } from './cost-model.ts';
export { type ReduceOp, type CustomReduceOp } from './reduce-op.ts';
export { COLLECTIVE_TAG } from './algorithms/common.ts';
export { chunkBounds, type ChunkBound } from '@dtlab/tensor';
export { CollectiveMismatchError } from '@dtlab/runtime';
