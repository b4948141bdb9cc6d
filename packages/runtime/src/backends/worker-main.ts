/**
 * The entry point of a rank worker. It says it is ready, then runs one
 * launch's rank program after another: for each, it builds the rank's Comm
 * over the worker port, imports the program's module (once per worker),
 * runs it, and reports how it ended.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { installAllocationHooks } from '@dtlab/tensor/meter';
import { createComm, notePeerFailed, pendingWaits, type Comm } from '../comm.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import { RankRuntime } from '../device/rank-runtime.ts';
import { rankScope } from '../device/scope.ts';
import { cleanupRegistry, fullCollection, setDeterministicFlags } from '../device/collect.ts';
import { endMarker, type FromRank, type ToRank, type WorkerInit } from './protocol.ts';

// Imported outside a worker (the grader does, to compile it ahead), this module does nothing.
// Launches talk over the port the pool handed over (see RankWorker); 'ready' goes on the worker's own channel.
const port = (workerData as { port?: MessagePort } | null)?.port ?? null;
const requireModule = createRequire(import.meta.url);
// Kept now: a worker that runs untrusted code loses the `process` global before its first launch (precompiled-loader.cjs, confine).
const { stdout, stderr } = process;
let current: { launch: number; comm: Comm; rt: RankRuntime } | null = null;

// The device's allocation hooks and forced collection are set up before any rank code runs here
// (and before a confined worker freezes the globals: the wrappers are what gets frozen).
if (port) {
  setDeterministicFlags();
  fullCollection();
  cleanupRegistry();
  rankScope();
  installAllocationHooks();
}

port?.on('message', (m: ToRank) => {
  if (m.t === 'run') return void run(m.launch, m.init);
  // Anything addressed to an earlier launch is stale.
  if (!current || m.launch !== current.launch) return;
  if (m.t === 'complete') current.rt.arrive(m.id, { payload: m.payload, error: m.error ? decodeError(m.error) : undefined, vtUs: m.vtUs, readyUs: m.readyUs });
  else if (m.t === 'peerFailed') notePeerFailed(current.comm, m.rank, m.root, m.message);
});

function run(launch: number, init: WorkerInit): void {
  const post = (m: FromRank, transfer: ArrayBuffer[] = []) => port!.postMessage(m, transfer);
  let idleScheduled = false;
  // Tell the fabric when this rank has nothing left to do but wait: after a
  // wait is posted, once the event loop comes round with the wait still open.
  const scheduleIdle = () => {
    if (idleScheduled) return;
    idleScheduled = true;
    setImmediate(() => {
      idleScheduled = false;
      if (current?.comm === comm && pendingWaits(comm) > 0) post({ t: 'idle', launch });
    });
  };
  // Every call carries the virtual time the runtime read from the rank's meter (never one the caller gives).
  const rt = new RankRuntime(
    init.rank,
    {
      send: (dst, tag, payload, vt) => post({ t: 'send', launch, dst, tag, payload, vt }, [payload.buffer]),
      post: (id, src, tag, expect, vt) => post({ t: 'post', launch, id, src, tag, expect, vt }),
      wait: (id, vt) => {
        post({ t: 'wait', launch, id, vt });
        scheduleIdle();
      },
      announce: (index, call) => post({ t: 'announce', launch, index, call }),
      barrier: (id, vt) => {
        post({ t: 'barrier', launch, id, vt });
        scheduleIdle();
      },
      mark: (mark) => post({ t: 'mark', launch, mark }),
    },
    init.device,
    { gc: fullCollection(), registry: cleanupRegistry() },
  );
  const comm = createComm(init.rank, init.worldSize, rt.transport(), init.seed, init.faults, rt);
  rt.attach(comm);
  current = { launch, comm, rt };
  // Code that reaches this thread outside any async context is this rank's.
  rankScope().fallback = rt.rootContext;
  const end = (m: FromRank, transfer: ArrayBuffer[] = []) => {
    stdout.write(endMarker(launch));
    stderr.write(endMarker(launch));
    post(m, transfer);
    if (current?.launch === launch) {
      current = null;
      rankScope().fallback = undefined;
    }
  };
  rt.run(() => main(init, comm, rt)).then(
    (value) =>
      // The last memory point starts a fresh job, with nothing of the program's last one in the way.
      setImmediate(() => {
        const device = rt.finish();
        const transfer: ArrayBuffer[] = [];
        let encoded: unknown;
        try {
          encoded = encodeValue(value, transfer);
          end({ t: 'done', launch, value: encoded, device }, transfer);
        } catch (e) {
          end({ t: 'fail', launch, error: encodeError(e), device });
        }
      }),
    (e: unknown) => end({ t: 'fail', launch, error: encodeError(e), device: rt.report() }),
  );
}

async function main(init: WorkerInit, comm: Comm, rt: RankRuntime): Promise<unknown> {
  // Through the require hook that loaded this module (tsx's, or precompiled-loader.cjs: see pool.ts), as CommonJS.
  let mod: Record<string, unknown>;
  try {
    mod = requireModule(init.module) as Record<string, unknown>;
  } catch (e) {
    // esbuild's own words ("not supported with the cjs output format") do not say what to do.
    if (/top-level await/i.test(String((e as Error)?.message))) {
      throw new SyntaxError(`${init.module} (or a module it imports) uses top-level await, which a rank program cannot: the workers backend loads modules as CommonJS. Move the await into the exported function.`);
    }
    throw e;
  }
  const fn = mod[init.exportName];
  if (typeof fn !== 'function') {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    throw new TypeError(`${init.module} has no exported function '${init.exportName}'; its exported functions are: ${names.join(', ') || '(none)'}`);
  }
  // Loading ran in the rank's context, so what the modules allocated and keep is counted; the loader's garbage is not.
  await new Promise((r) => setImmediate(r));
  rt.programStarts();
  const args = decodeValue(init.args) as unknown[];
  rt.adoptArgs(args);
  return fn(comm, ...args);
}

parentPort?.postMessage({ t: 'ready' } satisfies FromRank);
