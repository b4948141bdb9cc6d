/**
 * A rank program loaded as untrusted code that tries to leave something for
 * the next launch on the same worker, through every place of a thread that
 * two launches could both reach (test/confined.test.ts): `stash` leaves a
 * secret in each, `recover`, run by the next launch, looks for it. A
 * confined worker gives the next launch fresh modules and nothing of the
 * last one, so `recover` finds nothing; without the confinement the module
 * state alone carries the secret across.
 */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';

const SECRET = 'the-answer-is-42';
type Bag = Record<PropertyKey, unknown>;

// Module state: what a submission would use first.
let kept: string | undefined;

/** 'ok' if `f` ran, else what it threw. */
function attempt(f: () => void): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

/** The prototypes of objects Node's globals hand out, by name. */
function hostObjects(): Record<string, object> {
  const t = setTimeout(() => undefined, 0);
  const i = setImmediate(() => undefined);
  clearTimeout(t);
  clearImmediate(i);
  return {
    timeout: Object.getPrototypeOf(t) as object,
    immediate: Object.getPrototypeOf(i) as object,
    searchParamsIterator: Object.getPrototypeOf(new URLSearchParams('a=1').entries()) as object,
    // Node's performance has it; a confined rank's does not.
    ...(typeof performance.nodeTiming === 'object' ? { nodeTiming: Object.getPrototypeOf(performance.nodeTiming) as object } : {}),
    tensor: Object.getPrototypeOf(tensor([1])) as object,
  };
}

/** Leaves SECRET wherever it can; says where it could. */
export function stash(comm: Comm): Record<string, string> {
  const g = globalThis as unknown as Bag;
  const out: Record<string, string> = {};
  out.module = attempt(() => void (kept = SECRET));
  out.global = attempt(() => void (g.dtlabStash = SECRET));
  out.globalSymbol = attempt(() => void (g[Symbol.for('dtlab.stash')] = SECRET));
  for (const [name, proto] of Object.entries(hostObjects())) out[name] = attempt(() => void ((proto as Bag).dtlabStash = SECRET));
  out.regexp = attempt(() => void new RegExp(`(${SECRET})`).exec(`x${SECRET}x`));
  out.mark = attempt(() => void performance.mark('dtlab-stash', { detail: SECRET }));
  out.bufferPool = attempt(() => void Buffer.from(SECRET));
  // A timer still pending when the launch ends, which would run in the next one and write to what it shares.
  out.timer = attempt(() => void setTimeout(() => console.log(`timer of an earlier launch on rank ${comm.rank}`), 50));
  out.interval = attempt(() => void setInterval(() => console.log(`interval of an earlier launch on rank ${comm.rank}`), 20));
  // A timeout that has run, re-armed from its own callback: pending again, though it once ran.
  out.refreshed = attempt(() => {
    let runs = 0;
    setTimeout(function (this: { refresh(): unknown }) {
      if (++runs === 1) this.refresh();
      else console.log(`refreshed timer of an earlier launch on rank ${comm.rank}`);
    }, 0);
  });
  // A listener on a shared EventTarget (performance), which hands SECRET to whoever dispatches there.
  out.listener = attempt(() =>
    (performance as unknown as EventTarget).addEventListener('dtlab-stash', (e) => void ((e as unknown as Bag).secret = SECRET)),
  );
  // Node numbers its timers from the thread's async-id counter, which as many timers as a launch makes move on.
  out.timerNumbers = attempt(() => {
    for (let i = 0; i < TIMERS_MADE; i++) clearTimeout(setTimeout(() => undefined, 1e6));
  });
  // Node's own timer behind a handle, whose prototype every launch's timers share.
  out.realTimer = attempt(() => {
    const h = setTimeout(() => undefined, 0);
    clearTimeout(h);
    const real = (Object.getPrototypeOf(h) as { constructor: { real(h: unknown): object } }).constructor.real(h);
    (Object.getPrototypeOf(real) as Bag).dtlabStash = SECRET;
  });
  out.bufferSize = attempt(() => (performance as unknown as { setResourceTimingBufferSize(n: number): void }).setResourceTimingBufferSize(42));
  // How long this launch ran: a clock of the thread (Node's performance.now() counts from the thread's start)
  // would tell the next launch a number of this launch's choosing.
  const until = performance.now() + BUSY_MS;
  while (performance.now() < until);
  console.count('launches');
  return out;
}

/** How long `stash` keeps its thread busy before it returns. */
export const BUSY_MS = 500;
/** How many timers `stash` makes (and clears) to move a counter of the thread on. */
export const TIMERS_MADE = 5000;

/** What the next launch finds of SECRET (empty when nothing carried over). */
export async function recover(comm: Comm): Promise<Record<string, unknown>> {
  const timerNumber = Number(setTimeout(() => undefined, 0));
  const g = globalThis as unknown as Bag;
  const found: Record<string, unknown> = {};
  const look = (name: string, value: unknown) => {
    if (typeof value === 'string' && value.includes(SECRET)) found[name] = value;
  };
  look('module', kept);
  look('global', g.dtlabStash);
  look('globalSymbol', g[Symbol.for('dtlab.stash')]);
  for (const [name, proto] of Object.entries(hostObjects())) look(name, (proto as Bag).dtlabStash);
  const legacy = RegExp as unknown as Bag;
  for (const key of ['$1', 'lastMatch', 'input', 'leftContext', 'rightContext', 'lastParen']) look(`regexp ${key}`, legacy[key]);
  const clock = performance.now();
  const idle = typeof performance.nodeTiming === 'object' ? performance.nodeTiming.idleTime : undefined;
  try {
    look('mark', performance.getEntriesByName('dtlab-stash').map((e) => String((e as { detail?: unknown }).detail)).join());
  } catch {
    // a confined rank's performance keeps no marks
  }
  // Buffers small enough for the pool: each would be a slice of the pool's ArrayBuffer, whole in `.buffer`.
  for (const b of [Buffer.allocUnsafe(8), Buffer.from('y')]) look('bufferPool', Buffer.from(b.buffer).toString('latin1'));
  // Uninitialised memory: what an earlier launch's freed buffers held.
  for (let n = 0; n < 64; n++) look('allocUnsafe', Buffer.allocUnsafe(SECRET.length + (n % 4)).toString('latin1'));
  const event = new Event('dtlab-stash') as unknown as Bag;
  try {
    (performance as unknown as EventTarget).dispatchEvent(event as unknown as Event);
  } catch {
    // nor listeners
  }
  look('listener', event.secret);
  console.count('launches');
  // Long enough for the earlier launch's timer and interval to fire, were they still pending.
  await new Promise((r) => setTimeout(r, 120));
  return { rank: comm.rank, found, clock, idle, timerNumber };
}
