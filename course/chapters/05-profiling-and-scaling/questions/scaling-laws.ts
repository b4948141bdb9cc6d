/**
 * Chapter 5 questions on spending a compute budget: C ≈ 6ND, the
 * compute-optimal N and D of a fitted law L = E + A/N^α + B/D^β, the tokens
 * per parameter it implies (and why 20 is a rule of thumb), and fitting a
 * power law's exponent in log space.
 */
import { choice, distinctMisconceptions, formatNumber, numeric, sig, type Rng } from '../../../src/authoring.ts';
import { sci } from './numbers.ts';

/** A fitted loss surface L(N, D) = E + A/N^α + B/D^β. */
export interface LossLaw {
  E: number;
  A: number;
  B: number;
  alpha: number;
  beta: number;
}

/** Hoffmann et al. (2022), approach 3. */
export const CHINCHILLA_APPROACH_3: LossLaw = { E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28 };

/** The loss the law predicts for N parameters trained on D tokens. */
export function lawLoss(law: LossLaw, n: number, d: number): number {
  return law.E + law.A / n ** law.alpha + law.B / d ** law.beta;
}

/**
 * The N and D that minimise the law's loss on 6ND = C, in closed form:
 * N = G·(C/6)^(β/(α+β)), D = (C/6)/N, G = (αA/(βB))^(1/(α+β)).
 */
export function computeOptimal(law: LossLaw, c: number): { n: number; d: number } {
  const g = ((law.alpha * law.A) / (law.beta * law.B)) ** (1 / (law.alpha + law.beta));
  const n = g * (c / 6) ** (law.beta / (law.alpha + law.beta));
  return { n, d: c / 6 / n };
}

/** A law for a variant: Chinchilla's approach-3 constants, or another team's fit. */
function drawLaw(rng: Rng): { law: LossLaw; name: string } {
  if (rng.int(0, 2) === 0) return { law: CHINCHILLA_APPROACH_3, name: 'Hoffmann et al.\'s approach-3 fit' };
  const law = { E: rng.pick([1.69, 1.8, 2.0]), A: rng.pick([250, 406.4, 600]), B: rng.pick([410.7, 800, 1500]), alpha: rng.pick([0.3, 0.32, 0.36]), beta: rng.pick([0.26, 0.28, 0.3, 0.34]) };
  return { law, name: 'a team\'s fit to its own small runs' };
}

function lawText(l: LossLaw): string {
  return `E = ${l.E}, A = ${l.A}, B = ${l.B}, α = ${l.alpha}, β = ${l.beta}`;
}

const BUDGETS = [1e20, 1e21, 1e22, 1e23, 1e24];

/** Tokens a budget leaves for a model size: D = C/(6N). */
export const tokensFromBudget = numeric({
  id: 'tokens-from-budget',
  topic: 'tokens a compute budget buys, C ≈ 6ND',
  generate(rng: Rng) {
    const c = rng.pick([1e20, 3e20, 1e21, 3e21, 1e22, 1e23]);
    // A model the budget can train on at least a few tokens per parameter, and not absurdly many.
    const sizes = [0.125, 0.35, 1.3, 2.7, 6.7, 13, 30, 70].map((b) => b * 1e9).filter((n) => c / (6 * n * n) >= 5 && c / (6 * n * n) <= 1000);
    const params = rng.pick(sizes);
    const answer = c / (6 * params) / 1e9;
    const tolerance = { relative: 0.01 };
    return {
      prompt: `A budget of C = ${sci(c)} FLOPs trains a dense transformer of ${formatNumber(params / 1e9)} B parameters. With C ≈ 6ND, how many tokens can it train on? Answer in billions of tokens.`,
      answer,
      format: { unit: null, tolerance, countWords: ['billion', 'billion tokens'] },
      explanation: `D = C/(6N) = ${sci(c)}/(6·${sci(params)}) = ${sci(answer * 1e9, 4)} tokens, ${formatNumber(sig(answer, 4))} billion: ${formatNumber(sig((answer * 1e9) / params, 3))} tokens per parameter. 6 FLOPs per parameter per token: 2 forward, 4 backward.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: c / (2 * params) / 1e9, why: 'That counts 2N FLOPs per token, the forward pass only; training also runs backward, which costs twice the forward.' },
        { value: (20 * params) / 1e9, why: 'That is 20 tokens per parameter, which ignores the budget: C = 6ND fixes D once N is chosen.' },
        { value: c / params / 1e9, why: 'That leaves out the 6: every token costs about 6 FLOPs per parameter.' },
      ]),
    };
  },
});

/** The compute-optimal model size of a fitted law, in billions of parameters. */
export const computeOptimalSize = numeric({
  id: 'compute-optimal-model-size',
  topic: 'the compute-optimal N of a fitted law',
  generate(rng: Rng) {
    const { law, name } = drawLaw(rng);
    const c = rng.pick(BUDGETS);
    const { n } = computeOptimal(law, c);
    const a = law.beta / (law.alpha + law.beta);
    const g = ((law.alpha * law.A) / (law.beta * law.B)) ** (1 / (law.alpha + law.beta));
    const answer = n / 1e9;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `A loss surface L(N, D) = E + A/N^α + B/D^β, ${name}: ${lawText(law)}. For a budget C = ${sci(c)} FLOPs with C ≈ 6ND, which model size N minimises the predicted loss? Answer in billions of parameters.`,
      answer,
      format: { unit: null, tolerance, countWords: ['billion', 'B'] },
      explanation: `On 6ND = C the loss is least where αA/N^α = βB/D^β, which gives N = G·(C/6)^(β/(α+β)) with G = (αA/(βB))^(1/(α+β)) = ${formatNumber(sig(g, 4))} and β/(α+β) = ${formatNumber(sig(a, 4))}: N = ${sci(n, 4)}, ${formatNumber(sig(answer, 4))} billion, trained on D = C/(6N) = ${sci(c / 6 / n, 4)} tokens (${formatNumber(sig(c / 6 / n / n, 3))} per parameter).`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.sqrt(c / 120) / 1e9, why: 'That is 20 tokens per parameter (C = 6N·20N). The ratio at the optimum comes from the fitted law, and differs from 20 with its exponents.' },
        { value: (g * c ** a) / 1e9, why: 'That uses C for N·D; with C ≈ 6ND, N·D = C/6.' },
        { value: (g * (c / 6) ** (law.alpha / (law.alpha + law.beta))) / 1e9, why: 'That swaps the exponents: N grows as (C/6)^(β/(α+β)), so the faster the data term falls (the larger β), the more of the budget goes to the model.' },
      ]),
    };
  },
});

/** Tokens per parameter at a fitted law's optimum: (C/6)^((α-β)/(α+β))/G². */
export const tokensPerParameter = numeric({
  id: 'optimal-tokens-per-parameter',
  topic: 'tokens per parameter at the compute optimum',
  generate(rng: Rng) {
    const c = rng.pick([1e21, 1e22, 1e23, 1e24]);
    const law = CHINCHILLA_APPROACH_3;
    const { n, d } = computeOptimal(law, c);
    const answer = d / n;
    const tolerance = { relative: 0.02 };
    return {
      prompt: `With Hoffmann et al.'s approach-3 fit (${lawText(law)}) and C ≈ 6ND, how many training tokens per parameter does the compute-optimal model use at a budget of C = ${sci(c)} FLOPs?`,
      answer,
      format: { unit: null, tolerance, countWords: ['tokens', 'tokens per parameter'] },
      explanation: `N_opt = ${sci(n, 4)} and D_opt = C/(6·N_opt) = ${sci(d, 4)}, so D/N = (C/6)^((α-β)/(α+β))/G² = ${formatNumber(sig(answer, 4))}. Because α > β the ratio grows with the budget, as C^${formatNumber(sig((law.alpha - law.beta) / (law.alpha + law.beta), 3))}: 20 tokens per parameter is a rule of thumb from Hoffmann et al.'s other two approaches, not what these constants say.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: 20, why: 'Twenty is the rule of thumb from approaches 1 and 2, near Chinchilla\'s own budget; these constants imply another ratio, which changes with C.' },
        { value: n / d, why: 'That is parameters per token, N/D, the ratio upside down.' },
        { value: (c / 6) ** ((law.alpha - law.beta) / (law.alpha + law.beta)), why: 'That leaves out G² = (αA/(βB))^(2/(α+β)): the constants A and B matter, not only the exponents.' },
      ]),
    };
  },
});

/** A power law's exponent from two runs: subtract E, then take the slope on log-log axes. */
export const exponentFromTwoRuns = numeric({
  id: 'power-law-exponent-from-two-runs',
  topic: 'fitting a power law\'s exponent in log space',
  generate(rng: Rng) {
    const e = 1.69;
    const alpha = rng.pick([0.27, 0.3, 0.34, 0.38]);
    const a = rng.pick([300, 406.4, 520]);
    const n1 = rng.pick([1e7, 3e7, 1e8]);
    const k = rng.pick([4, 10, 30]);
    const n2 = n1 * k;
    const l1 = Number((e + a / n1 ** alpha).toFixed(4));
    const l2 = Number((e + a / n2 ** alpha).toFixed(4));
    const answer = Math.log((l1 - e) / (l2 - e)) / Math.log(k);
    const tolerance = { relative: 0.02 };
    return {
      prompt: `Two models trained on far more data than they can use (so the data term is negligible) reach losses L = ${l1} at N = ${sci(n1)} parameters and L = ${l2} at N = ${sci(n2)}. The irreducible loss is known, E = ${e}, and L(N) = E + A/N^α. What is α?`,
      answer,
      format: { unit: null, tolerance },
      explanation: `log(L - E) = log A - α·log N is a straight line: α = ln((${l1} - ${e})/(${l2} - ${e})) / ln(${k}) = ln(${formatNumber(sig((l1 - e) / (l2 - e), 5))}) / ${formatNumber(sig(Math.log(k), 5))} = ${formatNumber(sig(answer, 4))}. Any log base gives the same α, as long as both logs use it.`,
      misconceptions: distinctMisconceptions(answer, tolerance, [
        { value: Math.log(l1 / l2) / Math.log(k), why: 'That fits log L, not log(L - E): the constant E bends the curve on log-log axes and flattens the slope. The power law is in the reducible part.' },
        { value: Math.log10((l1 - e) / (l2 - e)) / Math.log(k), why: 'That mixes a base-10 log on top with a natural log below: the bases must match (or the ratio is off by ln 10).' },
        { value: (l1 - l2) / (l2 - e), why: 'That is the relative drop of the reducible loss, not an exponent: an exponent is a ratio of logs, Δlog(L - E)/Δlog N.' },
      ]),
    };
  },
});

/** Why 20 tokens per parameter is a rule of thumb, not a law. */
export const twentyTokensRule = choice({
  id: 'twenty-tokens-per-parameter',
  topic: 'why 20 tokens per parameter is a rule of thumb',
  generate(rng: Rng) {
    const c = rng.pick([1e21, 1e22, 1e23]);
    const law = CHINCHILLA_APPROACH_3;
    const { n, d } = computeOptimal(law, c);
    const ruleN = Math.sqrt(c / 120);
    return {
      prompt: `A team fits L = E + A/N^α + B/D^β to its small runs and gets Hoffmann et al.'s approach-3 constants (α = ${law.alpha}, β = ${law.beta}). For C = ${sci(c)} FLOPs, one engineer proposes "20 tokens per parameter": N = √(C/120) ≈ ${formatNumber(sig(ruleN / 1e9, 3))} B parameters. What is wrong with that?`,
      correct: { text: `the tokens per parameter come from the fitted law: at this budget it puts the optimum near ${formatNumber(sig(n / 1e9, 3))} B parameters and ${formatNumber(sig(d / n, 2))} tokens per parameter, so the rule's model is too large`, why: `Minimising the law on 6ND = C gives D/N = (C/6)^((α-β)/(α+β))/G², which depends on the exponents and grows with C when α > β. 20 is what Hoffmann et al.'s other approaches found near Chinchilla's budget.` },
      distractors: [
        { text: 'nothing: C ≈ 6ND fixes the ratio D/N at 20 for every budget', why: 'The budget fixes only the product N·D. How to split it between N and D is what the fitted law decides.' },
        { text: 'nothing: the optimum is where the model term A/N^α equals the data term B/D^β, and that is 20 tokens per parameter', why: 'At the optimum the marginal gains balance, αA/N^α = βB/D^β, not the terms themselves; and neither condition gives 20 in general.' },
        { text: 'the rule\'s model is too small: α > β means the model term falls faster, so the budget should go to parameters', why: 'With α > β the data term is the slower one to reduce, so as the budget grows the optimum spends more of it on tokens: more tokens per parameter, not fewer.' },
      ],
      explanation: 'A scaling law is fitted, and the compute-optimal split follows from its exponents and constants; "20 tokens per parameter" summarises one fit at one scale. The optimum is flat, though: the rule costs little loss, and a larger model than needed costs more to serve.',
    };
  },
});

/** Fit power laws in log space, not linear space. */
export const fitInLogSpace = choice({
  id: 'fit-power-laws-in-log-space',
  topic: 'why a power law is fitted in log space',
  generate(rng: Rng) {
    const from = rng.pick([1e6, 1e7, 3e7]);
    const span = rng.pick([100, 300, 1000]);
    return {
      prompt: `You have the final losses of small runs from N = ${sci(from)} to ${sci(from * span)} parameters and fit L(N) = E + A/N^α. Why fit it by least squares on log(L - E) against log N rather than on L against N?`,
      correct: { text: 'on log-log axes the power law is a straight line and each point counts by its relative error; in linear space the few largest losses, of the smallest models, decide the fit', why: `Over a ${span}-fold range of N the reducible losses differ by more than an order of magnitude: a least-squares fit in linear space matches the small models' large losses and barely sees the large models, which are what the extrapolation is about.` },
      distractors: [
        { text: 'it makes no difference: least squares finds the same A and α in either space', why: 'Least squares minimises a different sum in each space: absolute errors in one, relative errors in the other. With noisy losses the two fits differ, and the exponent most.' },
        { text: 'linear space is better: taking logs distorts the noise, so log-space exponents are biased', why: 'Loss noise is roughly proportional to the loss, so relative errors, which log space measures, are the right ones to weigh equally.' },
        { text: 'only because the parameter counts are too large for floating point in linear space', why: 'Numbers of 10^9 are no problem for float64; the reason is how the errors are weighed, not overflow.' },
      ],
      explanation: 'Fit power laws where they are straight lines, on log axes, and check the fit by predicting a held-out larger run; an exponent fitted in linear space extrapolates badly.',
    };
  },
});

/** Why Kaplan et al. (2020) recommended larger models than Hoffmann et al. (2022). */
export const kaplanVersusChinchilla = choice({
  id: 'kaplan-versus-chinchilla',
  topic: 'why the two scaling studies disagreed',
  generate(rng: Rng) {
    const c = rng.pick([1e22, 1e23, 1e24]);
    const ratio = (c / 1e21) ** (0.73 - 0.5);
    return {
      prompt: `Kaplan et al. (2020) found the compute-optimal model size growing as C^0.73; Hoffmann et al. (2022) found about C^0.5. Starting from the same model size at 10^21 FLOPs, Kaplan's exponent gives a model about ${formatNumber(sig(ratio, 2))} times larger than Hoffmann's at C = ${sci(c)}. What do Hoffmann et al. give as the main reason for the difference?`,
      correct: { text: 'Kaplan et al. used one learning-rate schedule length for all runs, so runs stopped short of it were under-trained; Hoffmann et al. matched each schedule to its run\'s tokens', why: 'Losses measured before the schedule had decayed overstate what fewer tokens give, which makes data look less useful and larger models look better. Counting parameters differently (Kaplan leaves out embeddings) and small scales also contributed.' },
      distractors: [
        { text: 'Kaplan et al. counted 2ND training FLOPs instead of 6ND', why: 'Both count about 6N FLOPs per training token; a constant factor in C would not change an exponent anyway.' },
        { text: 'GPUs became faster between 2020 and 2022, which shifts the optimum towards more data', why: 'The compute-optimal split is about FLOPs, not about how fast the hardware delivers them: faster GPUs change the budget, not the exponents.' },
        { text: 'Hoffmann et al. counted only non-embedding parameters, which makes models look smaller', why: 'It is the other way round: Kaplan et al. left out embedding parameters, and Hoffmann et al. counted all of them.' },
      ],
      explanation: 'Scaling laws are measurements, and they inherit the measurement\'s choices: schedules, what is counted as a parameter, the range of scales. Check those before trusting an exponent.',
    };
  },
});
