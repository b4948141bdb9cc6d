/**
 * Chapter 4's knowledge check: pipeline parallelism, GPipe and 1F1B. Each
 * question lives with its topic in questions/; this file lists them. Raise
 * `revision` when questions are added or retired, and give new ones
 * `since: <new revision>` (see docs/authoring.md, "The course").
 */
import { defineBank } from '../../src/authoring.ts';
import { checkWithSgd, lifoActivations, sendSendDeadlock, undividedLoss } from './questions/correctness.ts';
import { activationsAlive, boundaryBytes, pipelineAcrossNodes } from './questions/memory.ts';
import { bubblePercent, interleavedBubble, microBatchesForBubble, mostMemoryStage, oneFOneBSavesMemory, sameWarmupEverywhere, stepTime, unbalancedStages, warmupCount } from './questions/schedule.ts';

/** Chapter 4's bank. */
export default defineBank({
  chapter: 4,
  revision: 1,
  questions: [
    bubblePercent,
    microBatchesForBubble,
    stepTime,
    unbalancedStages,
    interleavedBubble,
    warmupCount,
    activationsAlive,
    boundaryBytes,
    oneFOneBSavesMemory,
    mostMemoryStage,
    sameWarmupEverywhere,
    undividedLoss,
    checkWithSgd,
    lifoActivations,
    sendSendDeadlock,
    pipelineAcrossNodes,
  ],
});
