/**
 * The accelerator a meter models: how fast it computes and moves memory, and
 * how much memory it has. Figures are per microsecond, because virtual time
 * is kept in microseconds.
 */
import type { DType } from '../dtype.ts';

/** A device as the meter uses it (the runtime resolves presets and specs into this). */
export interface DeviceModel {
  /** Name shown in reports, such as 'a100-40gb'. */
  readonly name: string;
  /** Peak floating-point operations per microsecond, by dtype (1e6 = 1 TFLOP/s). */
  readonly flopsPerUs: Readonly<Record<DType, number>>;
  /** Memory bandwidth in bytes per microsecond (1e6 = 1 TB/s). */
  readonly memoryBytesPerUs: number;
  /** Memory capacity in bytes. */
  readonly capacityBytes: number;
}

/**
 * Virtual microseconds an op takes on `model` under the roofline: the op is
 * limited either by arithmetic or by memory traffic, whichever is slower.
 *
 *     time = max(flops / peak FLOP/s, bytes moved / memory bandwidth)
 */
export function rooflineUs(model: DeviceModel, flops: number, bytes: number, dtype: DType): number {
  const compute = flops / model.flopsPerUs[dtype];
  const memory = bytes / model.memoryBytesPerUs;
  return compute > memory ? compute : memory;
}
