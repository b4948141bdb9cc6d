/**
 * @dtlab/tensor/meter: the virtual accelerator's meter, for the runtime.
 *
 * Not part of `@dtlab/tensor`'s public API, and out of reach of rank code
 * that may only import packages by their exact names: whoever holds a meter
 * could make a rank's work look cheaper or its memory smaller. The runtime
 * creates one meter per rank and reads it from its own code.
 */
export { RankMeter, type RankMeterOptions, type MeterFigures, type OpFigures, type RegionFigures, type StreamFigures, type Timeline, type TimelineOp } from './rank-meter.ts';
export { MemoryTracker, type MemoryFigures, type MemoryMark, type MemoryOptions, type OutOfMemoryRequest, type SnapshotRow } from './memory.ts';
export { type DeviceModel, rooflineUs } from './model.ts';
export { type MeterContext } from './context.ts';
export { type MeterScope, setMeterScope, currentContext, runInContext, resumeContext } from './scope.ts';
export { Stream } from './stream.ts';
export { type RegistryWithCleanup } from './liveness.ts';
export { installAllocationHooks } from './hooks.ts';
export { allocateMetered, labelStorage, releaseStorage, untracked } from './allocation.ts';
export { charge, chargeCopy, chargeElementwise, chargeMatmul, chargeReduction } from './charge.ts';
