/**
 * The entry point of a rank worker on Node's worker threads. It says it is
 * ready, then runs one launch's rank program after another (rank-loop.ts,
 * which the browser's Web Worker host shares): here a message goes over the
 * port the pool handed over, a program module loads through the require
 * hook that loaded this file (once per worker), and the output streams get
 * an end marker when a program ends.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { installAllocationHooks } from '@dtlab/tensor/meter';
import { rankScope } from '../device/scope.ts';
import { cleanupRegistry, fullCollection, setDeterministicFlags } from '../device/collect.ts';
import type { FromRank, ToRank } from './protocol.ts';
import { serveRank } from './rank-loop.ts';

// Imported outside a worker (the grader does, to compile it ahead), this module does nothing.
// Launches talk over the port the pool handed over (see RankWorker); 'ready' goes on the worker's own channel.
const port = (workerData as { port?: MessagePort } | null)?.port ?? null;
const requireModule = createRequire(import.meta.url);
// Kept now: a worker that runs untrusted code loses the `process` global before its first launch (precompiled-loader.cjs, confine).
const { stdout, stderr } = process;
// The precompiled-module loader, if this worker's boot installed it (looked up, never loaded here): in a confined
// worker its freshLaunch() gives each launch fresh instances of the submission's modules and resets what a launch
// could leave behind for the next.
const loader = requireModule.cache[requireModule.resolve('../loading/precompiled-loader.cjs')]?.exports as
  | { freshLaunch(): void; endLaunch(): void; watchForStrays(callback: () => void): void }
  | undefined;
// The rank's own tasks are scheduled with Node's setImmediate as it was before confinement (which tracks the timers
// a launch leaves), so that none is counted among them.
const immediate = setImmediate;

// The device's allocation hooks and forced collection are set up before any rank code runs here
// (and before a confined worker freezes the globals: the wrappers are what gets frozen).
if (port) {
  setDeterministicFlags();
  fullCollection();
  cleanupRegistry();
  rankScope();
  installAllocationHooks();
  // Code of an earlier launch running in this thread (precompiled-loader.cjs, watchStrays): the launch that runs
  // is told at once, so that the launcher runs it again on fresh workers; code that runs between two launches
  // spoils the next. Said once a launch, synchronously, since the stray code may never give the thread back.
  let running: number | null = null;
  let told = false;
  let strayedBetween = false;
  const strayed = () => {
    if (running === null) strayedBetween = true;
    else if (!told) {
      told = true;
      port.postMessage({ t: 'strayed', launch: running } satisfies FromRank);
    }
  };
  loader?.watchForStrays(strayed);
  const rank = serveRank({
    post: (m, transfer = []) => port.postMessage(m, transfer),
    nextTask: (fn) => void immediate(fn),
    beginLaunch: (launch) => {
      loader?.freshLaunch();
      running = launch;
      told = false;
      if (strayedBetween) {
        strayedBetween = false;
        strayed();
      }
    },
    // Through the require hook that loaded this module (tsx's, or precompiled-loader.cjs: see pool.ts), as CommonJS.
    load: (init) => {
      try {
        return requireModule(init.module) as Record<string, unknown>;
      } catch (e) {
        // esbuild's own words ("not supported with the cjs output format") do not say what to do.
        if (/top-level await/i.test(String((e as Error)?.message))) {
          throw new SyntaxError(`${init.module} (or a module it imports) uses top-level await, which a rank program cannot: the workers backend loads modules as CommonJS. Move the await into the exported function.`);
        }
        throw e;
      }
    },
    host: { gc: fullCollection(), registry: cleanupRegistry() },
    setFallback: (ctx) => void (rankScope().fallback = ctx),
    ending: (_launch, init) => {
      loader?.endLaunch();
      running = null;
      stdout.write(init.marker);
      stderr.write(init.marker);
    },
  });
  // An uncaught error ends this thread; the launcher hears of it from the worker's 'error' event.
  port.on('message', (m: ToRank) => rank.handle(m));
}

parentPort?.postMessage({ t: 'ready' } satisfies FromRank);
