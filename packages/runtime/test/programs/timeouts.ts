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
 * Ranks 0 and 1 play ping-pong without end: the launching thread gets an
 * endless stream of messages, each received before the next is sent, so no
 * bound of the fabric stops it (fabric-limits.test.ts has a rank that never
 * receives). A one-way stream would not do: on a loaded machine the sender
 * outruns the receiver and meets the bound on unreceived messages.
 */
export async function flood(comm: Comm): Promise<void> {
  const t = tensor([1]);
  const peer = 1 - comm.rank;
  for (;;) {
    if (comm.rank === 0) {
      await comm.send(peer, t);
      await comm.recv(peer);
    } else {
      await comm.recv(peer);
      await comm.send(peer, t);
    }
  }
}
