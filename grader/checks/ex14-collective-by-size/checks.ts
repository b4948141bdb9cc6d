/**
 * Public checks of ex14-collective-by-size. The submission's chooser and
 * crossover formula run in a rank worker and only answer; the checks then
 * measure the library's three all-reduces themselves, on the virtual clock
 * (measure.ts), for the same buffers, world sizes and networks.
 *
 * - A choice passes when its measured time is within 5% of the fastest
 *   measured: exact α-β arithmetic picks the fastest (or, within a few
 *   bytes of a crossover, one within a fraction of a percent of it), and 5%
 *   lets a formula that rounds chunks differently through, while the wrong
 *   algorithm is off by 50% to 10x away from the crossover.
 * - A crossover passes when it lies within 3% (and at least 4·N bytes,
 *   one element per chunk) of the measured one, found by bisection on
 *   measured times to within one element.
 */
import { programPath, type CheckContext, type CheckFn } from '@dtlab/grader';
import { DEFAULT_NETWORK, type ChoiceCase, type CrossoverCase } from './data.ts';
import { ALGORITHMS, describeBytes, describeNetwork, measureAll, measureCrossover, round, type Algorithm } from './measure.ts';
import { answersShape, type Answers } from './programs.ts';

const ENTRY = 'src/collective-by-size.ts';
const program = { module: programPath(import.meta.url, './programs.ts'), export: 'answerCases' };

/** How much slower than the fastest a chosen algorithm may be, measured. */
export const CHOICE_SLACK = 0.05;
/** How far a predicted crossover may be from the measured one, relative. */
export const CROSSOVER_RTOL = 0.03;
/** The largest buffer the crossover search measures; a ring that has not won by then never does (its line has the least slope). */
export const CROSSOVER_CAP_BYTES = 2 ** 22;

/** Asks the submission every case in one rank worker. */
export async function answer(ctx: CheckContext, choices: ChoiceCase[], crossovers: CrossoverCase[]): Promise<Answers> {
  const result = await ctx.run({ worldSize: 1, program, args: [ctx.entry(ENTRY), choices, crossovers], returns: answersShape(choices.length, crossovers.length) });
  return result.ranks[0]!.value as Answers;
}

const ranks = (n: number) => `${n} rank${n === 1 ? '' : 's'}`;

/** Measures every case's three algorithms and fails at the first whose chosen one is more than CHOICE_SLACK slower than the fastest. */
export async function expectChoices(ctx: CheckContext, cases: ChoiceCase[], choices: string[]): Promise<void> {
  for (const [i, c] of cases.entries()) {
    const chosen = choices[i]!;
    const what = `case ${i}: an all-reduce of ${describeBytes(c.bytes)} on ${ranks(c.worldSize)} (${describeNetwork(c.network)})`;
    if (!(ALGORITHMS as readonly string[]).includes(chosen)) {
      ctx.fail(`${what}: chooseAllReduce returned ${JSON.stringify(chosen).slice(0, 60)}, which is none of ${ALGORITHMS.join(', ')}`, { rank: null, index: i, expected: ALGORITHMS.join(' | '), actual: chosen.slice(0, 60), label: 'the chosen algorithm' });
    }
    const { us, best } = await measureAll(c.worldSize, c.bytes, c.network);
    const mine = us[chosen as Algorithm];
    if (mine > us[best] * (1 + CHOICE_SLACK)) {
      const all = ALGORITHMS.map((a) => `${a} ${round(us[a])} µs`).join(', ');
      ctx.fail(
        `${what}: chose ${chosen}, which takes ${round(mine)} µs on the virtual clock, ${round(mine / us[best])}x the fastest, ${best} (${round(us[best])} µs); measured: ${all}. ` +
          `Write each algorithm's time under the α-β model (the collectives README, "The cost model") and take the smallest`,
        { rank: null, index: i, expected: best, actual: chosen, label: `the algorithm for ${describeBytes(c.bytes)} on ${ranks(c.worldSize)}` },
      );
    }
  }
  ctx.note(`${cases.length} buffers: every chosen algorithm within ${CHOICE_SLACK * 100}% of the fastest measured`);
}

/** Bisects for every case's measured crossover and fails at the first the submission's formula misses. */
export async function expectCrossovers(ctx: CheckContext, cases: CrossoverCase[], predicted: number[]): Promise<void> {
  for (const [i, c] of cases.entries()) {
    const got = predicted[i]!;
    const what = `case ${i}: ${ranks(c.worldSize)}, ${describeNetwork(c.network)}`;
    const m = await measureCrossover(c.worldSize, c.network, CROSSOVER_CAP_BYTES);
    if (m.above === Infinity) {
      if (!(got >= CROSSOVER_CAP_BYTES)) {
        ctx.fail(
          `${what}: ringCrossoverBytes returned ${describeBytes(got)}, but the ring is not the fastest at any size measured, up to ${describeBytes(CROSSOVER_CAP_BYTES)}, and its time grows as fast as another algorithm's, so it never wins: expected Infinity`,
          { rank: null, index: i, expected: 'Infinity', actual: String(round(got)), label: `the ring's crossover on ${ranks(c.worldSize)}` },
        );
      }
      continue;
    }
    const measured = (m.below + m.above) / 2;
    const tol = Math.max(CROSSOVER_RTOL * measured, 4 * c.worldSize);
    if (!(Math.abs(got - measured) <= tol)) {
      ctx.fail(
        `${what}: ringCrossoverBytes returned ${describeBytes(round(got))}; measured, the ring is not the fastest at ${describeBytes(m.below)} and is from ${describeBytes(m.above)} on (±${round(tol)} B allowed). ` +
          `The ring must beat every other algorithm: find where its time meets each one's, and which of those sizes is the last`,
        { rank: null, index: i, expected: round(measured), actual: round(got), label: `the ring's crossover (bytes) on ${ranks(c.worldSize)}` },
      );
    }
  }
  ctx.note(`${cases.length} crossovers within ${CROSSOVER_RTOL * 100}% of the measured ones`);
}

/** The public cases: the default network, buffers below and above the crossovers of 4 and 8 ranks. */
const SMALL: ChoiceCase[] = [256, 4096, 16384].flatMap((bytes) => [4, 8].map((worldSize) => ({ bytes, worldSize, network: DEFAULT_NETWORK })));
const LARGE: ChoiceCase[] = [2 ** 20, 2 ** 21].flatMap((bytes) => [4, 8].map((worldSize) => ({ bytes, worldSize, network: DEFAULT_NETWORK })));
const CROSSOVERS: CrossoverCase[] = [4, 8].map((worldSize) => ({ worldSize, network: DEFAULT_NETWORK }));

export const checks: Record<string, CheckFn> = {
  'small-buffers': async (ctx) => {
    const { choices } = await answer(ctx, SMALL, []);
    await expectChoices(ctx, SMALL, choices);
  },
  'large-buffers': async (ctx) => {
    const { choices } = await answer(ctx, LARGE, []);
    await expectChoices(ctx, LARGE, choices);
  },
  crossover: async (ctx) => {
    const { crossovers } = await answer(ctx, [], CROSSOVERS);
    await expectCrossovers(ctx, CROSSOVERS, crossovers);
  },
};
