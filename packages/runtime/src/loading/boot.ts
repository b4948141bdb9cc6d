/**
 * The first code of a rank worker, given to the Worker as a string. Two
 * kinds: through tsx (modules compiled as the worker loads them), or through
 * the precompiled loader (modules compiled ahead, and for untrusted code the
 * worker confined once the course's modules have loaded).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { WORKER_MAIN } from './precompile.ts';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const TSX_CACHE_GUARD = here('./tsx-cache.cjs');

/**
 * A rank worker's first code, in plain CommonJS, given to the Worker as a
 * string (`eval: true`): it guards tsx's cache (tsx-cache.cjs), registers
 * tsx's require hook, and loads worker-main.ts through it.
 *
 * - A string, not a file: Node 20 starts a worker from a file through its
 *   ES-module loader, even a .cjs file, and loading that loader's own code
 *   into each new thread made 5 workers cost 0.9 s of CPU time to start
 *   instead of 0.65 s.
 * - tsx's require hook, not its ES-module loader: that loader compiles in a
 *   hooks thread of its own, so every import crosses threads and each worker
 *   would start one (a worker then took about 0.2 s to start). The require
 *   hook compiles in this thread. So a rank worker loads the course's
 *   modules, the rank program and everything they import as CommonJS (tsx
 *   turns their import/export syntax into require); nothing a worker loads
 *   may use top-level await.
 */
export function workerBoot(): string {
  // Resolved when a pool needs it, not when this module loads: a confined rank worker evaluates every
  // course module, this one included, and resolving a package's exports loads Node's ES-module resolver.
  const tsxApi = createRequire(import.meta.url).resolve('tsx/cjs/api');
  return [`require(${JSON.stringify(TSX_CACHE_GUARD)});`, `require(${JSON.stringify(tsxApi)}).register();`, `require(${JSON.stringify(WORKER_MAIN)});`].join('\n');
}

/**
 * A rank worker's first code when its pool has precompiled modules: the
 * loader of precompiled-loader.cjs, then worker-main.ts through it. A worker
 * asked for `wantBundleCode` then posts V8's code for the bundle
 * (`{ t: 'bundle-code' }`) for the pool to give the workers it starts next;
 * it does so before it is confined and before any launch, so the code is
 * only ever the course's.
 */
export const PRECOMPILED_BOOT = [
  `const { workerData, parentPort } = require('node:worker_threads');`,
  `const { precompiled, bundleCode, wantBundleCode } = workerData;`,
  `const loader = require(${JSON.stringify(here('./precompiled-loader.cjs'))});`,
  `loader.install({ ...precompiled, bundleCode });`,
  `require(${JSON.stringify(WORKER_MAIN)});`,
  `if (wantBundleCode) parentPort.postMessage({ t: 'bundle-code', code: loader.bundleCode() });`,
  `if (precompiled.untrusted) loader.confine();`,
].join('\n');

