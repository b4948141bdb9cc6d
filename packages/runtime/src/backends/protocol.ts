/**
 * The messages between a rank worker and the launching thread. A worker may
 * serve many launches; every message carries the launch it belongs to, and
 * messages of a finished launch are ignored on both sides.
 */
import type { DType } from '@dtlab/tensor';
import type { ErrorRecord, Payload } from '../wire.ts';
import type { Fault } from '../types.ts';
import type { CollectiveCall } from '../errors.ts';
import type { MemoryMark } from '@dtlab/tensor/meter';
import type { RankDeviceOptions, RankDeviceReport } from '../device/rank-runtime.ts';

/** What a rank needs to run its program in one launch. */
export interface WorkerInit {
  rank: number;
  worldSize: number;
  module: string;
  exportName: string;
  args: unknown;
  seed: number;
  faults: Fault[];
  /** The rank's device (null: compute is free and memory not counted), timeline and mark key. */
  device: RankDeviceOptions;
  /**
   * What the worker writes on its output streams when the program has ended
   * (endMarker): with a number drawn for the launch, which its code never
   * sees, so that no output of the rank can pass for it and cut the rest off.
   */
  marker: string;
}

/** Rank worker to launcher (all but 'ready' carry `launch`). */
export type FromRank =
  | { t: 'ready' }
  | ({ launch: number } & (
      | { t: 'send'; dst: number; tag: number; payload: Payload; vt: number }
      | { t: 'post'; id: number; src: number; tag: number; expect?: { numel: number; dtype: DType } | undefined; vt: number }
      | { t: 'wait'; id: number; vt: number }
      | { t: 'barrier'; id: number; vt: number }
      | { t: 'announce'; index: number; call: CollectiveCall }
      | { t: 'mark'; mark: MemoryMark }
      | { t: 'idle' }
      | { t: 'strayed' }
      | { t: 'done'; value: unknown; device: RankDeviceReport }
      | { t: 'fail'; error: ErrorRecord; device: RankDeviceReport }
    ));

/** Launcher to rank worker. */
export type ToRank =
  | { t: 'run'; launch: number; init: WorkerInit }
  | { t: 'complete'; launch: number; id: number; payload?: Payload | undefined; error?: ErrorRecord | undefined; vtUs: number; readyUs: number }
  | { t: 'peerFailed'; launch: number; rank: number; root: number; message: string };

/**
 * Written to a rank's stdout and stderr when its program has ended, so the
 * launcher knows it has all the output: the launch's number and `nonce`, a
 * number drawn for the launch that only the launcher and the worker's own
 * code know.
 */
export function endMarker(launch: number, nonce: string): string {
  return `\u0000dtlab-end-of-launch-${launch}-${nonce}\n`;
}
