/**
 * A rank program loaded as untrusted code (PrecompiledModules.untrusted):
 * it tries the ways a submission could reach the host and reports what it
 * got, so that test/confined.test.ts can check that each one is closed, and
 * open again without the confinement.
 */
import { tensor } from '@dtlab/tensor';
import { WorkerPool, compileModules, launch, type Comm } from '@dtlab/runtime';
import { triple } from './untrusted-helper.ts';

// What the module's code receives as its CommonJS parameters: exports, require, module, ...
// @ts-ignore -- a module has `arguments` once compiled to CommonJS; that is what this probes
const moduleArgs = arguments as unknown as [unknown, (id: string) => unknown, { constructor?: unknown }];

function attempt(f: () => unknown): string {
  try {
    const v = f();
    return `ok: ${typeof v}`;
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

async function attemptAsync(f: () => Promise<unknown>): Promise<string> {
  try {
    const v = await f();
    return `ok: ${typeof v}`;
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

/** What each way to the host gave. */
export async function probe(comm: Comm): Promise<Record<string, unknown>> {
  console.log(`rank ${comm.rank} probing`);
  const g = globalThis as Record<string, unknown>;
  return {
    channels: ['BroadcastChannel', 'MessageChannel', 'MessagePort', 'fetch'].map((name) => `${name}: ${typeof g[name]}`).join(', '),
    dynamicImport: await attemptAsync(() => import('node:' + 'fs')),
    launch: await attemptAsync(() => launch({ worldSize: 1, program: async () => 1 })),
    compile: await attemptAsync(() => compileModules([])),
    requireData: attempt(() => moduleArgs[1]('./untrusted-data.json')),
    process: typeof g['pro' + 'cess'],
    requireFs: attempt(() => moduleArgs[1]('node:fs')),
    requireNotCompiled: attempt(() => moduleArgs[1]('./untrusted-outside.ts')),
    requireHelper: attempt(() => moduleArgs[1]('./untrusted-helper.ts')),
    moduleClass: typeof moduleArgs[2].constructor,
    sloppyThis: typeof (function (this: unknown) {
      return this;
    })(),
    stackApi: attempt(() => {
      (Error as unknown as { prepareStackTrace: unknown }).prepareStackTrace = () => 'callers';
      return new Error('x').stack;
    }),
    workers: attempt(() => new WorkerPool()),
    tensor: tensor([1, 2, 3]).sum().item(),
    helper: triple(2),
  };
}

let calls = 0;

/** How many launches this worker has run this module in, this one included. */
export function callsInThisWorker(): number {
  return ++calls;
}
