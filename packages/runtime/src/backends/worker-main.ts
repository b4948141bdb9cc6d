/**
 * The entry point of a rank worker. It says it is ready, then runs one
 * launch's rank program after another: for each, it builds the rank's Comm
 * over the worker port, imports the program's module (once per worker),
 * runs it, and reports how it ended.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { createComm, type Comm, type CommControl, type Transport } from '../comm.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import { endMarker, type FromRank, type ToRank, type WorkerInit } from './protocol.ts';

// Imported outside a worker (the grader does, to compile it ahead), this module does nothing.
// Launches talk over the port the pool handed over (see RankWorker); 'ready' goes on the worker's own channel.
const port = (workerData as { port?: MessagePort } | null)?.port ?? null;
const requireModule = createRequire(import.meta.url);
// Kept now: a worker that runs untrusted code loses the `process` global before its first launch (precompiled-loader.cjs, confine).
const { stdout, stderr } = process;
let current: { launch: number; comm: Comm; control: CommControl } | null = null;

port?.on('message', (m: ToRank) => {
  if (m.t === 'run') return void run(m.launch, m.init);
  // Anything addressed to an earlier launch is stale.
  if (!current || m.launch !== current.launch) return;
  if (m.t === 'complete') current.control.complete(m.id, { payload: m.payload, error: m.error ? decodeError(m.error) : undefined, vtUs: m.vtUs });
  else if (m.t === 'peerFailed') current.control.peerFailed(m.rank, m.root, m.message);
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
      if (current?.comm === comm && control.pendingWaits() > 0) post({ t: 'idle', launch });
    });
  };
  const transport: Transport = {
    send: (dst, tag, payload) => post({ t: 'send', launch, dst, tag, payload }, [payload.buffer]),
    post: (id, src, tag, expect) => post({ t: 'post', launch, id, src, tag, expect }),
    wait: (id) => {
      post({ t: 'wait', launch, id });
      scheduleIdle();
    },
    announce: (index, call) => post({ t: 'announce', launch, index, call }),
    barrier: (id) => {
      post({ t: 'barrier', launch, id });
      scheduleIdle();
    },
  };
  const { comm, control } = createComm(init.rank, init.worldSize, transport, init.seed, init.faults);
  current = { launch, comm, control };
  const end = (m: FromRank, transfer: ArrayBuffer[] = []) => {
    stdout.write(endMarker(launch));
    stderr.write(endMarker(launch));
    post(m, transfer);
    if (current?.launch === launch) current = null;
  };
  main(init, comm).then(
    (value) => {
      const transfer: ArrayBuffer[] = [];
      let encoded: unknown;
      try {
        encoded = encodeValue(value, transfer);
        end({ t: 'done', launch, value: encoded }, transfer);
      } catch (e) {
        end({ t: 'fail', launch, error: encodeError(e) });
      }
    },
    (e: unknown) => end({ t: 'fail', launch, error: encodeError(e) }),
  );
}

async function main(init: WorkerInit, comm: Comm): Promise<unknown> {
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
  return fn(comm, ...(decodeValue(init.args) as unknown[]));
}

parentPort?.postMessage({ t: 'ready' } satisfies FromRank);
