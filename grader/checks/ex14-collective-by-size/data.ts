/**
 * The cases of the ex14 checks, drawn from a seed: buffers, world sizes and
 * networks. Sizes are whole float32 buffers (multiples of 4 bytes). The
 * networks keep α·B (the bytes a link moves in one latency) between 256 B
 * and 32 KiB, so that every crossover (2.4 to 4.5 times α·B on 3 to 16
 * ranks) lies between about 600 B and 150 KiB, and sizes thirty times larger
 * stay cheap to measure.
 */
import { Generator } from '@dtlab/tensor';
import type { Network } from './measure.ts';

/** One question to the chooser. */
export interface ChoiceCase {
  bytes: number;
  worldSize: number;
  network: Network;
}

/** One question to the crossover formula. */
export interface CrossoverCase {
  worldSize: number;
  network: Network;
}

/** The course's default network: 10 µs, 10 Gbit/s (the runtime's DEFAULT_COST). */
export const DEFAULT_NETWORK: Network = { alphaUs: 10, bytesPerUs: 1250 };

/** A number drawn log-uniformly from [lo, hi]. */
export function logUniform(gen: Generator, lo: number, hi: number): number {
  return lo * (hi / lo) ** gen.uniform();
}

/** A network with α in [1, 50] µs and α·B in [256 B, 32 KiB], rounded to 3 significant digits. */
export function drawNetwork(gen: Generator): Network {
  const alphaUs = Number(logUniform(gen, 1, 50).toPrecision(3));
  const bytesPerUs = Number((logUniform(gen, 256, 32768) / alphaUs).toPrecision(3));
  return { alphaUs, bytesPerUs };
}

/** A float32 buffer size (bytes) drawn log-uniformly from [lo, hi] bytes. */
export function drawBytes(gen: Generator, lo: number, hi: number): number {
  return Math.max(1, Math.round(logUniform(gen, lo, hi) / 4)) * 4;
}

/**
 * `count` choice cases on the given world sizes (in turn): each a drawn
 * network and a size from 1/30 to 30 times 3·α·B (every crossover of 3 to 16
 * ranks lies between 2.4 and 4.5 times α·B), on both sides of the crossover,
 * and capped at 2 MiB.
 */
export function drawChoiceCases(seed: number, worldSizes: number[], count: number): ChoiceCase[] {
  const gen = new Generator(seed);
  return Array.from({ length: count }, (_, i) => {
    const worldSize = worldSizes[i % worldSizes.length]!;
    const network = drawNetwork(gen);
    const scale = 3 * network.alphaUs * network.bytesPerUs;
    return { worldSize, network, bytes: drawBytes(gen, scale / 30, Math.min(scale * 30, 2 ** 21)) };
  });
}
