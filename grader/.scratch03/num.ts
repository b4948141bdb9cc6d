import { launch } from '@dtlab/runtime';
import { zeroTraining } from '../hidden/ex03-zero-sharding/programs.ts';
import { singleProcessTraining, type Experiment } from '../hidden/ex03-zero-sharding/experiment.ts';
import type { StepsResult } from '../checks/ex03-zero-sharding/programs.ts';
import { fileURLToPath } from 'node:url';

const variant = process.argv[2] ?? 'solution';
const eps = Number(process.argv[3] ?? 1e-3);
const lr = Number(process.argv[4] ?? 1e-2);
const seeds = Number(process.argv[5] ?? 10);
const entry = variant === 'solution' ? fileURLToPath(new URL('../../solutions/ex03-zero-sharding/src/zero-adamw.ts', import.meta.url)) : fileURLToPath(new URL(`./${variant}.ts`, import.meta.url));
let worst = 0; let worstRel = 0;
for (let seed = 1; seed <= seeds; seed++) {
  for (const n of [1, 2, 3, 4, 5]) {
    const e: Experiment = { seed: seed * 7919 + n, sizes: [16, 63, 47, 10], batchPerRank: 6, steps: 5, opts: { lr, betas: [0.9, 0.99], eps, weightDecay: 0.1 } };
    const r = await launch({ worldSize: n, program: (comm) => zeroTraining(comm, entry, e) });
    if (!r.ok) throw r.ranks.find((x) => x.error)?.error;
    const exp = singleProcessTraining(e, n);
    for (const o of r.ranks) {
      const v = o.value as StepsResult;
      v.params.forEach((p, s) => {
        const a = p.data(), b = exp[s]!.data();
        for (let i = 0; i < a.length; i++) {
          const d = Math.abs(a[i]! - b[i]!);
          worst = Math.max(worst, d);
          worstRel = Math.max(worstRel, d / (1e-5 + 1e-4 * Math.abs(b[i]!)));
        }
      });
    }
  }
}
console.log(`${variant} eps=${eps} lr=${lr}: max |diff| ${worst.toExponential(3)}, max diff/(atol 1e-5 + rtol 1e-4|e|) = ${worstRel.toExponential(3)}`);
