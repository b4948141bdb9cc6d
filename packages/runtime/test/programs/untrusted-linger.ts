/**
 * A rank program loaded as untrusted code whose code goes on running after
 * its launch, through every way a host calls a thread back later
 * (test/confined.test.ts): `linger` starts each of them and returns at once,
 * `look`, run next on the same workers, waits long enough for all of them
 * to fire. Each says so on the console, which is the next launch's output
 * if it runs there. A confined worker that serves launch after launch either
 * runs none of them (a finalization callback, a timeout signal: they are
 * kept to their launch) or catches them as they run (a loop of promises a
 * host settles, whose reactions nothing can stop), and then the launch they
 * ran in is run again on fresh workers, so its output has none of it.
 */
import type { Comm } from '@dtlab/runtime';

// The calls used here of what the package's TypeScript library does not declare.
const { WebAssembly } = globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<unknown>; instantiate(bytes: Uint8Array, imports: object): Promise<unknown> } };
const atomics = Atomics as unknown as { waitAsync?: (a: Int32Array, index: number, value: number, timeoutMs: number) => { async: boolean; value: Promise<unknown> } };

// The smallest WebAssembly module: compiling it is a promise the host settles a little later.
const EMPTY_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
// A module that imports a function `m.f` and makes it its start function: instantiating it calls `f`.
const STARTS_F = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, 7, 1, 1, 0x6d, 1, 0x66, 0, 0, 8, 1, 0]);

/** An unsigned LEB128 number, as WebAssembly's binary format writes them. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    const low = n & 0x7f;
    n >>>= 7;
    out.push(n ? low | 0x80 : low);
  } while (n);
  return out;
}

/**
 * A module of `count` functions that each push and drop a constant `size`
 * times (compiling it takes a while), the last of which reads a local it
 * does not have: V8 rejects it once it gets there.
 */
function slowInvalidModule(count: number, size: number): Uint8Array {
  const good = new Uint8Array(2 + 3 * size);
  for (let i = 0; i < size; i++) good.set([0x41, 0x00, 0x1a], 1 + 3 * i); // i32.const 0, drop
  good[good.length - 1] = 0x0b; // end (good[0] = 0: no locals)
  const bad = [0, 0x20, ...leb(42), 0x1a, 0x0b]; // local.get 42, drop, end
  const goodSize = leb(good.length);
  const codeLength = leb(count).length + (count - 1) * (goodSize.length + good.length) + leb(bad.length).length + bad.length;
  const functions = [...leb(count), ...new Array<number>(count).fill(0)];
  const head = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, ...leb(functions.length), ...functions, 10, ...leb(codeLength), ...leb(count)];
  const out = new Uint8Array(head.length + codeLength - leb(count).length);
  out.set(head);
  let at = head.length;
  for (let i = 0; i < count - 1; i++) {
    out.set(goodSize, at);
    out.set(good, at + goodSize.length);
    at += goodSize.length + good.length;
  }
  out.set([...leb(bad.length), ...bad], at);
  return out;
}

/** What `linger` leaves behind, besides host callbacks (which every mode leaves). */
export type LingerMode = 'quiet' | 'promises' | 'start' | 'late' | 'reject';

/**
 * Starts code that outlives the launch: with 'promises', loops on promises
 * a host settles; with 'start', a loop of WebAssembly start functions
 * (which V8 calls from a task of its own, no promise's reaction, were the
 * module instantiated as V8 does it); with 'late', code that the runtime
 * itself runs as it sends the launch's result (a getter of the returned
 * object), which then waits for the next launch; with 'reject', a compile
 * left without a handler that fails once the launch is over (Node then ends
 * the thread, while it sits idle in the pool); and in every mode, host
 * callbacks.
 */
export function linger(comm: Comm, mode: LingerMode): unknown {
  const started: string[] = [];
  if (mode === 'late') {
    const value = Object.create(null) as Record<string, unknown>;
    Object.defineProperty(value, 'started', {
      enumerable: true,
      get() {
        void Promise.resolve().then(() => {
          const until = Date.now() + 300; // the launcher ends this launch and starts the next meanwhile
          while (Date.now() < until);
          console.log(`rank ${comm.rank}: a getter of an earlier launch's result printed this`);
        });
        return ['late getter'];
      },
    });
    return value;
  }
  if (mode === 'reject') {
    void WebAssembly.compile(slowInvalidModule(2000, 1000));
    started.push('failing compile');
  }
  if (mode === 'start') {
    const until = Date.now() + 2000;
    let told = false;
    const f = () => {
      if (!told && Date.now() > until - 1700) {
        told = true;
        console.log(`rank ${comm.rank}: a start function of an earlier launch is still running`);
      }
      if (Date.now() < until) void WebAssembly.instantiate(STARTS_F, { m: { f } });
    };
    void WebAssembly.instantiate(STARTS_F, { m: { f } });
    started.push('start loop');
  }
  if (mode === 'promises') {
    // A loop on promises the host settles: each turn compiles a module and goes round again, for two seconds.
    const until = Date.now() + 2000;
    let told = false;
    const again = (): unknown =>
      WebAssembly.compile(EMPTY_MODULE).then(() => {
        if (!told && Date.now() > until - 1700) {
          told = true;
          console.log(`rank ${comm.rank}: a promise loop of an earlier launch is still running`);
        }
        return Date.now() < until ? again() : undefined;
      });
    void again();
    started.push('wasm loop');
    if (typeof atomics.waitAsync === 'function') {
      const wait = atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
      if (wait.async) void wait.value.then(() => console.log(`rank ${comm.rank}: Atomics.waitAsync of an earlier launch settled`));
      started.push('waitAsync');
    }
  }
  // A finalization callback, for an object dropped now: it runs after a collection, whenever that comes.
  const registry = new FinalizationRegistry((held: string) => console.log(`rank ${comm.rank}: finalization callback of an earlier launch for ${held}`));
  registry.register({ big: new Array(1000).fill(0) }, 'an object of an earlier launch');
  keep.push(registry);
  started.push('finalization');
  // A timeout signal: Node aborts it from a timer of its own.
  AbortSignal.timeout(100).addEventListener('abort', () => console.log(`rank ${comm.rank}: a timeout signal of an earlier launch aborted`));
  started.push('timeout signal');
  return started;
}

// A registry must live for its callback to run: this launch's module instance keeps it (the thread keeps the
// instance as long as the code of a launch still refers to it).
const keep: unknown[] = [];

/** Waits for whatever an earlier launch left to fire, with a collection on the way; returns the rank. */
export async function look(comm: Comm): Promise<number> {
  await new Promise((r) => setTimeout(r, 200));
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
  else for (let i = 0; i < 50; i++) new Array(100_000).fill(i);
  await new Promise((r) => setTimeout(r, 300));
  return comm.rank;
}
