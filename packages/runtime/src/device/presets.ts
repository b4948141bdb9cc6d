/**
 * Devices a launch can give its ranks: named presets with published
 * figures, or a spec of your own. `launch({ device: 'a100-40gb' })`.
 */
import type { DeviceModel } from '@dtlab/tensor/meter';
import { LaunchSpecError } from '../errors.ts';

/** A device as a launch spec names it. Rates are per second. */
export interface DeviceSpec {
  name: string;
  /** Peak FLOP/s: one figure for both dtypes, or one per dtype. */
  flops: number | { float32: number; float64: number };
  /** Memory capacity in bytes. */
  memoryBytes: number;
  /** Memory bandwidth in bytes per second. */
  memoryBandwidth: number;
}

/** A preset: its figures and where they come from. */
export interface DevicePreset extends DeviceSpec {
  flops: { float32: number; float64: number };
  /** What the figures are and where they are published. */
  source: string;
}

const GiB = 2 ** 30;

/**
 * The presets. Vector (non-tensor-core) FP32 and FP64 peaks, since dtlab's
 * tensors are float32 and float64; HBM bandwidth and capacity as sold.
 */
export const DEVICE_PRESETS: Readonly<Record<string, DevicePreset>> = Object.freeze({
  course: {
    name: 'course',
    flops: { float32: 10e9, float64: 5e9 },
    memoryBytes: 64 * 2 ** 20,
    memoryBandwidth: 80e9,
    source:
      "dtlab's default, scaled for the course's small models on the default network (10 µs, 10 Gbit/s = 1.25 GB/s): " +
      'at 10 GFLOP/s, one data-parallel step of a 784-256-10 MLP at batch 64 per rank computes about 5 times as long as its ring all-reduce ' +
      'takes on 4 ranks, near the balance of large-model data-parallel training; memory bandwidth is 64 times the network, as an A100 (1,555 GB/s) ' +
      'is about 62 times a 200 Gbit/s InfiniBand link; 64 MiB holds the course models with room to show what sharding saves',
  },
  'a100-40gb': {
    name: 'a100-40gb',
    flops: { float32: 19.5e12, float64: 9.7e12 },
    memoryBytes: 40 * GiB,
    memoryBandwidth: 1555e9,
    source: 'NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB): FP32 19.5 TFLOP/s, FP64 9.7 TFLOP/s, HBM2 1,555 GB/s',
  },
  'a100-80gb': {
    name: 'a100-80gb',
    flops: { float32: 19.5e12, float64: 9.7e12 },
    memoryBytes: 80 * GiB,
    memoryBandwidth: 2039e9,
    source: 'NVIDIA A100 Tensor Core GPU datasheet (SXM4 80 GB): FP32 19.5 TFLOP/s, FP64 9.7 TFLOP/s, HBM2e 2,039 GB/s',
  },
  'h100-80gb': {
    name: 'h100-80gb',
    flops: { float32: 67e12, float64: 34e12 },
    memoryBytes: 80 * GiB,
    memoryBandwidth: 3.35e12,
    source: 'NVIDIA H100 Tensor Core GPU datasheet (SXM5 80 GB): FP32 67 TFLOP/s, FP64 34 TFLOP/s, HBM3 3.35 TB/s',
  },
  'v100-32gb': {
    name: 'v100-32gb',
    flops: { float32: 15.7e12, float64: 7.8e12 },
    memoryBytes: 32 * GiB,
    memoryBandwidth: 900e9,
    source: 'NVIDIA Tesla V100 datasheet (SXM2 32 GB): FP32 15.7 TFLOP/s, FP64 7.8 TFLOP/s, HBM2 900 GB/s',
  },
  t4: {
    name: 't4',
    flops: { float32: 8.1e12, float64: 8.1e12 / 32 },
    memoryBytes: 16 * GiB,
    memoryBandwidth: 320e9,
    source: "NVIDIA T4 datasheet: FP32 8.1 TFLOP/s, GDDR6 320 GB/s, 16 GB (FP64 is not in the datasheet: 1/32 of FP32, Turing's ratio)",
  },
});

/** The preset dtrun's --profile uses when no --device is given. */
export const DEFAULT_DEVICE = 'course';

/** The device model of a preset name or a spec; throws LaunchSpecError naming what is wrong. */
export function resolveDevice(device: string | DeviceSpec): DeviceModel {
  if (typeof device === 'string' ? !Object.hasOwn(DEVICE_PRESETS, device) : device === null || typeof device !== 'object') {
    throw new LaunchSpecError(`launch: unknown device ${JSON.stringify(device)}; presets are ${Object.keys(DEVICE_PRESETS).join(', ')}, or pass a spec { name, flops, memoryBytes, memoryBandwidth }`);
  }
  const spec = typeof device === 'string' ? DEVICE_PRESETS[device]! : device;
  const bad = (what: string) => new LaunchSpecError(`launch: device ${JSON.stringify(spec.name ?? '?')}: ${what}`);
  if (typeof spec.name !== 'string' || spec.name === '') throw bad('needs a name');
  const flops = typeof spec.flops === 'number' ? { float32: spec.flops, float64: spec.flops } : spec.flops;
  const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (!flops || !positive(flops.float32) || !positive(flops.float64)) throw bad(`flops must be a positive number of FLOP/s (or { float32, float64 }), got ${JSON.stringify(spec.flops)}`);
  if (!positive(spec.memoryBytes)) throw bad(`memoryBytes must be a positive number of bytes, got ${JSON.stringify(spec.memoryBytes)}`);
  if (!positive(spec.memoryBandwidth)) throw bad(`memoryBandwidth must be a positive number of bytes per second, got ${JSON.stringify(spec.memoryBandwidth)}`);
  return Object.freeze({
    name: spec.name,
    flopsPerUs: Object.freeze({ float32: flops.float32 / 1e6, float64: flops.float64 / 1e6 }),
    memoryBytesPerUs: spec.memoryBandwidth / 1e6,
    capacityBytes: spec.memoryBytes,
  });
}

/** A device model back as a spec (per second), for reports. */
export function specOf(model: DeviceModel): DeviceSpec & { flops: { float32: number; float64: number } } {
  return {
    name: model.name,
    flops: { float32: model.flopsPerUs.float32 * 1e6, float64: model.flopsPerUs.float64 * 1e6 },
    memoryBytes: model.capacityBytes,
    memoryBandwidth: model.memoryBytesPerUs * 1e6,
  };
}
