/**
 * @dtlab/runtime: run N ranks concurrently with real message passing through
 * a traced fabric with a virtual clock, and get every rank's outcome as data.
 */
export { launch, DEFAULT_TIMEOUT_MS, DEFAULT_MEMORY_LIMIT_MB } from './launch.ts';
export { Comm, Work, type SendOptions, type RecvOptions } from './comm.ts';
export { DEFAULT_COST } from './fabric/clock.ts';
export { retainedBytes } from './retained-bytes.ts';
export { WorkerPool, WorkerStartError, type WorkerPoolOptions } from './backends/pool.ts';
export { buildWorkerBundle, compileModules, type CompiledModule, type CompileOptions, type PrecompiledModules, type WorkerBundleInfo, type WorkerBundleSpec } from './loading/precompile.ts';
export {
  DeadlockError,
  RankFailedError,
  CommTimeoutError,
  RankTimeoutError,
  RecvMismatchError,
  InjectedFaultError,
  LaunchSpecError,
  OutOfMemoryError,
  FabricLimitError,
  type DeviceAllocation,
  CollectiveMismatchError,
  ClockHiddenError,
  describeCall,
  type CollectiveCall,
} from './errors.ts';
export type {
  LaunchSpec,
  LaunchResult,
  RankOutcome,
  RankProgram,
  ProgramRef,
  TraceEvent,
  RankStats,
  CostModel,
  Fault,
  OutputMode,
  BlockedRank,
} from './types.ts';
export { formatSummary, formatOutcome, formatBytes, formatUs } from './report.ts';
export { memory, profile } from './device/api.ts';
export { formatProfile, formatCount, type ProfileFormat } from './device/format-profile.ts';
export { chromeTrace, type ChromeTrace, type TraceEventRecord } from './device/chrome-trace.ts';
export { DEVICE_PRESETS, DEFAULT_DEVICE, type DeviceSpec, type DevicePreset } from './device/presets.ts';
export type { DeviceReport, RankDeviceStats } from './types.ts';
export type { MemoryMark, SnapshotRow, MemoryFigures, OpFigures, RegionFigures, StreamFigures, Timeline } from '@dtlab/tensor/meter';
