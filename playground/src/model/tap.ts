/**
 * A Comm that records what it sends and when it receives: the collectives
 * view needs each message's contents and what its sender had received
 * before sending it, which the trace does not keep (only sizes and times).
 * The tapped Comm forwards every call to the rank's real Comm, so the
 * messages, their order, the trace and the clock are those of an untapped
 * run. It copies each tensor it sends before forwarding it (the ring moves
 * its buffers with `transfer`).
 */
import type { Comm, Work } from '@dtlab/runtime';
import type { Tensor } from '@dtlab/tensor';

/** One message as its sender passed it to the Comm. */
export interface SentMessage {
  src: number;
  dst: number;
  tag: number;
  values: number[];
}

/** One rank's sends and completed receives, in the order it made them. */
export type TapEvent = { kind: 'send'; rank: number; message: SentMessage } | { kind: 'recv'; rank: number; src: number; tag: number };

/** `comm`, recording every send and completed receive in `log`. */
export function tapComm(comm: Comm, log: TapEvent[]): Comm {
  const rank = comm.rank;
  const sent = (dst: number, t: Tensor, opts?: { tag?: number }) => log.push({ kind: 'send', rank, message: { src: rank, dst, tag: opts?.tag ?? 0, values: Array.from(t.data()) } });
  const received = (src: number, opts?: { tag?: number }) => log.push({ kind: 'recv', rank, src, tag: opts?.tag ?? 0 });
  const tappedWork = (w: Work<Tensor>, src: number, opts?: { tag?: number }) => {
    let logged: Promise<Tensor> | undefined;
    return {
      wait: () => (logged ??= w.wait().then((t) => (received(src, opts), t))),
      isCompleted: () => w.isCompleted(),
    } as unknown as Work<Tensor>;
  };
  const tapped = {
    rank,
    worldSize: comm.worldSize,
    seed: comm.seed,
    isend: (dst: number, t: Tensor, opts?: Parameters<Comm['isend']>[2]) => (sent(dst, t, opts), comm.isend(dst, t, opts)),
    send: (dst: number, t: Tensor, opts?: Parameters<Comm['send']>[2]) => (sent(dst, t, opts), comm.send(dst, t, opts)),
    irecv: (src: number, opts?: Parameters<Comm['irecv']>[1]) => tappedWork(comm.irecv(src, opts), src, opts),
    recv: async (src: number, opts?: Parameters<Comm['recv']>[1]) => {
      const t = await comm.recv(src, opts);
      received(src, opts);
      return t;
    },
    barrier: () => comm.barrier(),
    announceCollective: (...a: Parameters<Comm['announceCollective']>) => comm.announceCollective(...a),
    get virtualTimeUs() {
      return comm.virtualTimeUs;
    },
  };
  // The collectives use only the members above; a Comm's private fields make it nominal to TypeScript.
  return tapped as unknown as Comm;
}
