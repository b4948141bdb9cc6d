/**
 * Chapter 2's knowledge check: sharding the training state, ZeRO stages 1-3
 * and FSDP. Each question lives with its topic in questions/; this file
 * lists them. Raise `revision` when questions are added or retired, and
 * give new ones `since: <new revision>` (see docs/authoring.md, "The course").
 */
import { defineBank } from '../../src/authoring.ts';
import { communicationVolume, fsdpBackwardNeeds, fsdpIsDataParallel, fsdpPeakParameters, fsdpSavedWeights, whyStage3CostsMore } from './questions/fsdp.ts';
import { bytesPerParameter, dataParallelStates, leastStageThatFits, minimumRanks, notSharded, whatEachStageShards, zeroStageMemory } from './questions/memory.ts';
import { adamHidesSum, agreementIsNotParity, elementOwner, optimizerStateStaysLocal, shardStateBytes } from './questions/sharding.ts';
import { zero2PeakGradients, zero2ReduceAfterBackward } from './questions/zero2.ts';

/** Chapter 2's bank. */
export default defineBank({
  chapter: 2,
  revision: 2,
  questions: [
    dataParallelStates,
    zeroStageMemory,
    minimumRanks,
    bytesPerParameter,
    shardStateBytes,
    elementOwner,
    communicationVolume,
    fsdpPeakParameters,
    leastStageThatFits,
    whatEachStageShards,
    notSharded,
    agreementIsNotParity,
    optimizerStateStaysLocal,
    adamHidesSum,
    whyStage3CostsMore,
    fsdpIsDataParallel,
    // Revision 2: exercises 7 (ZeRO stage 2) and 8 (FSDP).
    zero2PeakGradients,
    zero2ReduceAfterBackward,
    fsdpSavedWeights,
    fsdpBackwardNeeds,
  ],
});
