/** Rank programs that never end, for the launch's timeouts. */
import type { Comm } from '../../src/index.ts';
import { tensor } from '@dtlab/tensor';

/**
 * Rank 0 spins in a synchronous infinite loop; rank 1 awaits a promise that
 * never resolves. Neither is ever in a communication call.
 */
export async function stuckTwoWays(comm: Comm): Promise<void> {
  if (comm.rank === 0) {
    for (;;) {
      // Never yields: only terminating the worker stops this.
    }
  }
  await new Promise(() => {});
}

/** Rank 0 awaits a promise that never resolves; rank 1 waits for a message from it. */
export async function awaitForever(comm: Comm): Promise<void> {
  if (comm.rank === 0) await new Promise(() => {});
  await comm.recv(0);
}

/**
 * Rank 0 waits for a message from rank 1, which never sends: it sleeps for
 * `sleepMs` (running, not waiting in a communication call) and returns.
 */
export async function silentPeer(comm: Comm, sleepMs: number): Promise<string> {
  if (comm.rank === 1) {
    await new Promise((r) => setTimeout(r, sleepMs));
    return 'slept';
  }
  await comm.recv(1);
  return 'received';
}

/**
 * Rank 0 sends to rank 1 without end, never waiting for anything; rank 1
 * never receives. The launching thread gets an endless stream of messages.
 */
export async function flood(comm: Comm): Promise<void> {
  if (comm.rank === 0) {
    const t = tensor([1]);
    for (;;) await comm.send(1, t);
  }
  await new Promise(() => {});
}
