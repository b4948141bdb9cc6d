/**
 * Chapter 5's knowledge check: profiling one worker, predicting scaling,
 * choosing the collective by message size, and compute-optimal scaling
 * laws. Each question lives with its topic in questions/; this file lists
 * them. Raise `revision` when questions are added or retired, and give new
 * ones `since: <new revision>` (see docs/authoring.md, "The course").
 */
import { defineBank } from '../../src/authoring.ts';
import { bucketingSpeedup, ringRecursiveDoublingCrossover, ringTreeCrossover } from './questions/collective-choice.ts';
import { asyncTimer, mfuFromThroughput, mfuVersusHfu, steadyStateBaseline, trainingDays, whichBound } from './questions/profiling.ts';
import { amdahlRequiredFraction, amdahlSpeedup, communicationBoundRanks, weakScalingEfficiency } from './questions/scaling.ts';
import { computeOptimalSize, exponentFromTwoRuns, fitInLogSpace, kaplanVersusChinchilla, tokensFromBudget, tokensPerParameter, twentyTokensRule } from './questions/scaling-laws.ts';

/** Chapter 5's bank. */
export default defineBank({
  chapter: 5,
  revision: 1,
  questions: [
    steadyStateBaseline,
    asyncTimer,
    whichBound,
    amdahlSpeedup,
    amdahlRequiredFraction,
    weakScalingEfficiency,
    communicationBoundRanks,
    mfuFromThroughput,
    trainingDays,
    mfuVersusHfu,
    ringTreeCrossover,
    ringRecursiveDoublingCrossover,
    bucketingSpeedup,
    tokensFromBudget,
    computeOptimalSize,
    tokensPerParameter,
    exponentFromTwoRuns,
    twentyTokensRule,
    fitInLogSpace,
    kaplanVersusChinchilla,
  ],
});
