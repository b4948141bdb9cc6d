/**
 * Chapter 1's knowledge check: data parallelism and ring all-reduce. Each
 * question lives with its topic in questions/; this file lists them.
 * Raise `revision` when questions are added or retired, and give new ones
 * `since: <new revision>` (see docs/authoring.md, "The course").
 */
import { defineBank } from '../../src/authoring.ts';
import { averageGradients, bitwiseReplicas, broadcastInit, sumNotMean } from './questions/averaging.ts';
import { busBandwidth, doublingRanks, fastestAlgorithm, naiveOverRing, ringBytesPerRank, ringTime } from './questions/ring-cost.ts';
import { afterScatterReduce, chunkSize, ringMessages, ringTrafficLimit } from './questions/ring-mechanics.ts';
import { accumulatedLoss, accumulationTraffic, unevenRankCounts } from './questions/accumulation.ts';
import { bucketCount, declarationOrderBuckets } from './questions/buckets.ts';
import { broadcastFrozen, hookReducesParameter } from './questions/ddp.ts';
import { addingRanksBatch, dataParallelSpeedup, globalBatch } from './questions/scaling.ts';

/** Chapter 1's bank. */
export default defineBank({
  chapter: 1,
  revision: 2,
  questions: [
    ringBytesPerRank,
    ringTime,
    naiveOverRing,
    busBandwidth,
    fastestAlgorithm,
    doublingRanks,
    ringMessages,
    chunkSize,
    afterScatterReduce,
    ringTrafficLimit,
    sumNotMean,
    averageGradients,
    bitwiseReplicas,
    broadcastInit,
    dataParallelSpeedup,
    globalBatch,
    addingRanksBatch,
    // Revision 2: exercises 4 (DDP from scratch), 5 (bucketed overlap) and 6 (gradient accumulation).
    hookReducesParameter,
    broadcastFrozen,
    bucketCount,
    declarationOrderBuckets,
    accumulatedLoss,
    accumulationTraffic,
    unevenRankCounts,
  ],
});
