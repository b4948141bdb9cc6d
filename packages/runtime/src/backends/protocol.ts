/**
 * The messages between a rank worker and the launching thread.
 */
import type { DType } from '@dtlab/tensor';
import type { Payload } from '../fabric.ts';
import type { ErrorRecord } from '../wire.ts';
import type { Fault } from '../types.ts';
import type { CollectiveCall } from '../errors.ts';

/** What a rank worker starts with (its workerData). */
export interface WorkerInit {
  rank: number;
  worldSize: number;
  module: string;
  exportName: string;
  args: unknown;
  seed: number;
  faults: Fault[];
}

/** Rank worker to launcher. */
export type FromRank =
  | { t: 'send'; dst: number; tag: number; payload: Payload }
  | { t: 'post'; id: number; src: number; tag: number; expect?: { numel: number; dtype: DType } | undefined }
  | { t: 'wait'; id: number }
  | { t: 'barrier'; id: number }
  | { t: 'announce'; index: number; call: CollectiveCall }
  | { t: 'idle' }
  | { t: 'done'; value: unknown }
  | { t: 'fail'; error: ErrorRecord };

/** Launcher to rank worker. */
export type ToRank =
  | { t: 'complete'; id: number; payload?: Payload | undefined; error?: ErrorRecord | undefined; vtUs: number }
  | { t: 'peerFailed'; rank: number; root: number; message: string };
