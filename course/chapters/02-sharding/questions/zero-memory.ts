/**
 * ZeRO's per-rank memory for model states with mixed-precision Adam, from
 * Rajbhandari et al. (2020): Ψ parameters, fp16 parameters and gradients
 * (2Ψ + 2Ψ bytes) and K = 12 bytes of optimizer state per parameter (fp32
 * master weights, momentum and variance), on N data-parallel ranks.
 *
 * | stage                      | bytes per rank   |
 * |----------------------------|------------------|
 * | 0 (plain data parallelism) | (2 + 2 + K)Ψ     |
 * | 1 (optimizer states)       | 4Ψ + KΨ/N        |
 * | 2 (+ gradients)            | 2Ψ + (2 + K)Ψ/N  |
 * | 3 (+ parameters)           | (2 + 2 + K)Ψ/N   |
 */

/** Optimizer-state bytes per parameter of mixed-precision Adam. */
export const K_ADAM = 12;

/** A ZeRO stage; 0 is plain data parallelism. */
export type Stage = 0 | 1 | 2 | 3;

/** Bytes per rank of model states for `psi` parameters on `n` ranks at `stage` (with `k` optimizer bytes per parameter). */
export function modelStateBytes(stage: Stage, psi: number, n: number, k = K_ADAM): number {
  switch (stage) {
    case 0:
      return (2 + 2 + k) * psi;
    case 1:
      return 4 * psi + (k * psi) / n;
    case 2:
      return 2 * psi + ((2 + k) * psi) / n;
    case 3:
      return ((2 + 2 + k) * psi) / n;
  }
}

/** The formula of `stage` as the readings write it. */
export const STAGE_FORMULA: Record<Stage, string> = { 0: '16Ψ', 1: '4Ψ + 12Ψ/N', 2: '2Ψ + 14Ψ/N', 3: '16Ψ/N' };

/** What each stage shards, in words. */
export const STAGE_SHARDS: Record<Stage, string> = {
  0: 'nothing: every rank holds everything',
  1: 'the optimizer states only',
  2: 'the optimizer states and the gradients',
  3: 'the optimizer states, the gradients and the parameters',
};
