/**
 * `pnpm demo` (packages/tensor/examples/spiral.ts): trains a small MLP on a toy problem with @dtlab/tensor and
 * prints the loss falling. The data: points in the plane, labelled by which
 * of three spiral arms they lie on.
 */
import { Generator, nn, optim, tensor } from '@dtlab/tensor';

const seed = Number(process.env.DTLAB_SEED ?? 0);
const gen = new Generator(seed);
const perClass = 40;
const points: number[][] = [];
const labels: number[] = [];
for (let c = 0; c < 3; c++) {
  for (let i = 0; i < perClass; i++) {
    const r = i / perClass;
    const angle = c * ((2 * Math.PI) / 3) + r * 4 + gen.normal() * 0.2;
    points.push([r * Math.sin(angle), r * Math.cos(angle)]);
    labels.push(c);
  }
}
const x = tensor(points);
const model = new nn.MLP([2, 32, 32, 3], { seed, activation: 'tanh' });
const opt = new optim.Adam(model.parameters(), { lr: 0.02 });

console.log(`Training a 2-32-32-3 MLP on ${points.length} spiral points with Adam (seed ${seed}).`);
for (let step = 0; step <= 300; step++) {
  opt.zeroGrad();
  const logits = model.forward(x);
  const loss = nn.crossEntropy(logits, labels);
  loss.backward();
  opt.step();
  if (step % 30 === 0) {
    const predicted = logits.argmax(1);
    const accuracy = predicted.filter((p, i) => p === labels[i]).length / labels.length;
    const bar = '#'.repeat(Math.round(loss.item() * 20));
    console.log(`step ${String(step).padStart(3)}  loss ${loss.item().toFixed(4)}  accuracy ${(accuracy * 100).toFixed(0).padStart(3)}%  ${bar}`);
  }
}
