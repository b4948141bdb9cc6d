/**
 * Hidden checks of ex14-collective-by-size: the public checks' comparisons
 * (measured times on the virtual clock, the same tolerances) over buffers,
 * world sizes and networks drawn from the grading seed.
 *
 * - drawn-choices: 42 buffers on 2, 3, 4, 5, 6, 8 and 16 ranks, networks with
 *   α from 1 to 50 µs and α·B from 256 B to 32 KiB, sizes on both sides of
 *   the crossovers; plus, on 16 ranks, a buffer of 2·α·B, where the tree is
 *   the fastest (between α·B and 3.6·α·B).
 * - drawn-crossovers: the crossover on each of those world sizes, for a drawn
 *   network: 2 ranks have none (the naive exchange is one message of the same
 *   bytes), 3 to 8 ranks meet the naive algorithm last, 16 the tree.
 */
import type { CheckFn } from '@dtlab/grader';
import { Generator } from '@dtlab/tensor';
import { answer, expectChoices, expectCrossovers } from '../../checks/ex14-collective-by-size/checks.ts';
import { drawChoiceCases, drawNetwork, type ChoiceCase, type CrossoverCase } from '../../checks/ex14-collective-by-size/data.ts';

const WORLD_SIZES = [2, 3, 4, 5, 6, 8, 16];

export const checks: Record<string, CheckFn> = {
  'drawn-choices': async (ctx) => {
    const cases: ChoiceCase[] = drawChoiceCases(ctx.seedFor('choices'), WORLD_SIZES, 42);
    const gen = new Generator(ctx.seedFor('tree-band'));
    for (let k = 0; k < 3; k++) {
      const network = drawNetwork(gen);
      cases.push({ worldSize: 16, network, bytes: Math.round((2 * network.alphaUs * network.bytesPerUs) / 4) * 4 });
    }
    const { choices } = await answer(ctx, cases, []);
    await expectChoices(ctx, cases, choices);
  },
  'drawn-crossovers': async (ctx) => {
    const gen = new Generator(ctx.seedFor('crossovers'));
    const cases: CrossoverCase[] = WORLD_SIZES.map((worldSize) => ({ worldSize, network: drawNetwork(gen) }));
    const { crossovers } = await answer(ctx, [], cases);
    await expectCrossovers(ctx, cases, crossovers);
  },
};
