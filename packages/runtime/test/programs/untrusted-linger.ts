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

// The smallest WebAssembly module: compiling it is a promise the host settles a little later.
const EMPTY_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
// A module that imports a function `m.f` and makes it its start function: instantiating it calls `f`.
const STARTS_F = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, 7, 1, 1, 0x6d, 1, 0x66, 0, 0, 8, 1, 0]);

/**
 * Starts code that outlives the launch: with 'promises', loops on promises
 * a host settles; with 'start', a loop of WebAssembly start functions
 * (which V8 calls from a task of its own, no promise's reaction, were the
 * module instantiated as V8 does it); and in every mode, host callbacks.
 */
export function linger(comm: Comm, mode: 'quiet' | 'promises' | 'start'): string[] {
  const started: string[] = [];
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
    if (typeof Atomics.waitAsync === 'function') {
      const wait = Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
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
