/**
 * Chapter 3's knowledge check: tensor parallelism, the Megatron MLP and the
 * vocabulary-parallel cross-entropy. Each question lives with its topic in
 * questions/; this file lists them. Raise `revision` when questions are
 * added or retired, and give new ones `since: <new revision>` (see
 * docs/authoring.md, "The course").
 */
import { defineBank } from '../../src/authoring.ts';
import { mlpAllReduceBytes, mlpAllReduceTime, mlpWeightMemory, tpDpCrossover, tpInsideNode } from './questions/cost.ts';
import { biasAfterReduce, conjugateOperators, missingBackwardReduce, nonlinearityOfPartialSums, rowParallelShard, whyColumnThenRow } from './questions/megatron-mlp.ts';
import { localMaximum, maskTargets, vocabCollectives, vocabOwner, vocabTrafficRatio } from './questions/vocab.ts';

/** Chapter 3's bank. */
export default defineBank({
  chapter: 3,
  revision: 1,
  questions: [
    nonlinearityOfPartialSums,
    rowParallelShard,
    mlpAllReduceBytes,
    mlpAllReduceTime,
    mlpWeightMemory,
    tpDpCrossover,
    vocabOwner,
    vocabTrafficRatio,
    vocabCollectives,
    conjugateOperators,
    whyColumnThenRow,
    biasAfterReduce,
    missingBackwardReduce,
    tpInsideNode,
    localMaximum,
    maskTargets,
  ],
});
