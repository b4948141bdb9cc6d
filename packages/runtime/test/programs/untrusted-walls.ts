/**
 * A rank program loaded as untrusted code that tries to change what the
 * course's own code in its thread calls, and to reach past the console and
 * its stack traces (test/confined.test.ts). Each probe reports 'refused' or
 * what it got; without the confinement every one of them succeeds.
 */
import { tensor, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { inspectViaBuffer } from './untrusted-reach.ts';

/** 'refused' if `f` throws, else 'changed'. */
function change(f: () => void): string {
  try {
    f();
    return 'changed';
  } catch {
    return 'refused';
  }
}

type Bag = Record<PropertyKey, unknown>;

/** What each attempt to change course code, or to reach the worker's stdio, gave. */
export async function walls(comm: Comm): Promise<Record<string, unknown>> {
  const t = tensor([1, 2, 3]);
  const proto = (x: object) => Object.getPrototypeOf(x) as Bag;
  const work = comm.irecv(comm.rank);
  comm.isend(comm.rank, t);
  await work.wait();
  const stdout = (console as unknown as Bag)['_stdout'] as object | undefined;
  // An own property of an ordinary object shadows the prototype's: that must keep working.
  const own = { value: 1 } as Bag;
  own['toString'] = () => 'own';
  const err = new Error();
  err.message = 'assigned';
  // A Node timer carries the async context it was made in (a rank's runtime and meter) under a symbol.
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  const timerThis = await new Promise<unknown>((r) => setTimeout(function (this: unknown) {
    r(this);
  }, 0));
  // And a promise carries nothing: no async-context store (which led to the meter) and no number from the
  // thread's async-id counter (which one launch could advance for the next to read).
  const promiseSymbols = Object.getOwnPropertySymbols(Promise.resolve()).map(String);
  // A custom inspect function: Node's console would call it with the thread's own util.inspect, which is not
  // frozen and which every launch on the worker shares.
  let handedOut = 'never called';
  const inspectable = {
    [Symbol.for('nodejs.util.inspect.custom')]: (_depth: unknown, _options: unknown, inspect: unknown) => {
      handedOut = typeof inspect === 'function' ? `util.inspect, ${Object.isFrozen(inspect) ? 'frozen' : 'not frozen'}` : typeof inspect;
      return 'inspected';
    },
  };
  console.log(inspectable);
  console.dir(inspectable, { customInspect: true } as object);
  // Buffer's own custom inspect method, called directly, does hand out util.inspect (to a value kept on the
  // buffer): that one must be frozen, with its default options, colours and styles.
  const viaBuffer = inspectViaBuffer();
  const parts = (f: { defaultOptions: object; colors: object; styles: object }) => [f, f.defaultOptions, f.colors, f.styles];
  const bufferInspect =
    typeof viaBuffer === 'function'
      ? `util.inspect, ${parts(viaBuffer as unknown as Parameters<typeof parts>[0]).every((x) => Object.isFrozen(x)) ? 'frozen with its options, colours and styles' : 'not frozen'}`
      : typeof viaBuffer;
  const symbolsOf = (x: unknown) => (x !== null && typeof x === 'object' ? Object.getOwnPropertySymbols(x).map(String) : []);
  return {
    // Each assignment puts back what was there, so that the unconfined run, where they succeed, still works.
    commPrototype: change(() => void (proto(comm)['send'] = proto(comm)['send'])),
    workPrototype: change(() => void (proto(work)['wait'] = proto(work)['wait'])),
    commInstance: change(() => void ((comm as unknown as Bag)['recv'] = proto(comm)['recv'])),
    tensorPrototype: change(() => void (proto(t)['add'] = proto(t)['add'])),
    storagePrototype: change(() => void (proto((t as unknown as Bag)['_storage'] as object)['extra'] = 1)),
    objectPrototype: change(() => void (Object.prototype as Bag)['toString']),
    objectPrototypeAssign: change(() => void ((Object.prototype as Bag)['toString'] = Object.prototype.toString)),
    objectPrototypeAdd: change(() => void ((Object.prototype as Bag)['extra'] = 1)),
    errorPrototype: change(() => void ((Error.prototype as unknown as Bag)['message'] = '')),
    typeErrorPrototype: change(() => void ((TypeError.prototype as unknown as Bag)['name'] = 'TypeError')),
    performance: change(() => void ((performance as unknown as Bag)['now'] = performance.now)),
    bufferPrototype: change(() => void ((Uint8Array.prototype as unknown as Bag)['extra'] = 1)),
    ownOverride: String(own),
    errorOverride: err.message,
    promiseSymbols,
    customInspect: handedOut,
    bufferInspect,
    timerSymbols: [...symbolsOf(timer), ...symbolsOf(timerThis)].filter((s) => s.includes('Resource') || s.includes('async')),
    stdioPort: stdout ? Object.getOwnPropertySymbols(stdout).map(String).filter((s) => s.includes('Port')) : [],
    stack: (new Error('here').stack ?? '').split('\n').slice(1),
    sum: (t.add(t) as Tensor).sum().item(),
  };
}
