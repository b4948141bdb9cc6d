/**
 * Rank programs that bypass their Comm and hand the transport messages that
 * are not a tensor's bytes (test/payload.test.ts): the fabric must refuse
 * them and fail that rank.
 */
import type { Comm } from '@dtlab/runtime';

type Raw = { transport: { send(dst: number, tag: number, payload: unknown): void } };

/** Rank 0 sends a "tensor" with shared memory in its shape (a structured clone would share it); rank 1 waits for it. */
export async function sharedMemory(comm: Comm): Promise<string> {
  if (comm.rank === 0) {
    (comm as unknown as Raw).transport.send(1, 0, { dtype: 'float32', shape: [0, new SharedArrayBuffer(8)], buffer: new ArrayBuffer(0) });
    return 'sent';
  }
  const t = await comm.recv(0);
  return `got ${t.shape.join('x')}`;
}
