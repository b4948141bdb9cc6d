/**
 * Handing a rank the results of its waits, in a fixed order.
 *
 * The fabric finishes a rank's waits in whatever order messages arrive. If
 * the rank's code resumed in that order, code interleaved across awaits
 * (two collectives in flight, a background stream beside the main one)
 * would run in an order that depends on thread timing, and so would the
 * virtual time charged and the memory allocated in between. So a rank takes
 * the results in the order it started the waits: a wait's result is
 * delivered once every wait the rank started before it has been delivered.
 * Each delivery runs in a task of its own (a fresh job), where a memory
 * point can collect garbage without the current job's own objects in the
 * way, and the rank's code then runs on from there.
 *
 * The same rule holds on both backends, so a rank runs its code in the same
 * order on each.
 */
import { nextTask } from '../next-task.ts';

/** Something delivered in order: a fabric completion (its result once it arrives) or a local event (a mark). */
interface Slot {
  ready: boolean;
  result: unknown;
  run: (result: unknown) => void;
}

/** The delivery queue of one rank. */
export class Deliveries {
  private readonly queue: Slot[] = [];
  private readonly byId = new Map<number, Slot>();
  private scheduled = false;
  private closed = false;

  /** The rank started wait `id`: its result, when it arrives (`arrive`), is handed to `run` in order. */
  expect(id: number, run: (result: unknown) => void): void {
    const slot: Slot = { ready: false, result: undefined, run };
    this.byId.set(id, slot);
    this.queue.push(slot);
  }

  /** The fabric finished wait `id` with `result`. */
  arrive(id: number, result: unknown): void {
    const slot = this.byId.get(id);
    if (!slot) return;
    this.byId.delete(id);
    slot.result = result;
    slot.ready = true;
    this.pump();
  }

  /** Something of the rank's own that completes at once but must wait its turn (a memory mark, a snapshot). */
  local(run: () => void): void {
    this.queue.push({ ready: true, result: undefined, run });
    this.pump();
  }

  /** Nothing more is delivered (the rank's program ended). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.byId.clear();
  }

  private pump(): void {
    if (this.scheduled || this.closed || !this.queue[0]?.ready) return;
    this.scheduled = true;
    nextTask(() => {
      this.scheduled = false;
      if (this.closed) return;
      const slot = this.queue.shift()!;
      try {
        slot.run(slot.result);
      } finally {
        this.pump();
      }
    });
  }
}
