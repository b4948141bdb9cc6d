/**
 * The rank side of a thread-per-rank backend, whatever the thread is: a
 * Node worker thread (worker-main.ts) or a browser's Web Worker
 * (web-worker-main.ts). For each launch's 'run' it builds the rank's runtime
 * and Comm over the thread's channel to the launcher, loads the program
 * module, runs it, and reports how it ended; 'complete' and 'peerFailed'
 * reach the rank's runtime. The two hosts differ only in what RankThread
 * gives: how a message is posted, how a module is loaded, how a task is
 * scheduled, and what the meter scope and the output streams need.
 */
import { createComm, notePeerFailed, pendingWaits, type Comm } from '../comm.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import { RankRuntime, type RankHost } from '../device/rank-runtime.ts';
import type { MeterContext } from '@dtlab/tensor/meter';
import type { FromRank, ToRank, WorkerInit } from './protocol.ts';

/** What the thread a rank runs in provides (see the file comment). */
export interface RankThread {
  /** Posts a message to the launcher, moving the buffers in `transfer`. */
  post(m: FromRank, transfer?: ArrayBuffer[]): void;
  /** Runs `fn` in a task of its own, after the tasks scheduled before it this way. */
  nextTask(fn: () => void): void;
  /**
   * Called as each launch begins, before its program loads: a confined Node
   * worker gives the launch fresh instances of the submission's modules and
   * nothing an earlier launch left (precompiled-loader.cjs, freshLaunch), and
   * says from now on if code of an earlier launch runs in this one.
   */
  beginLaunch?(launch: number): void;
  /** The program's module (its exports), loaded in the rank's context; errors thrown are the rank's. */
  load(init: WorkerInit): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The thread's forced collection and finalization registry, for the device's memory points. */
  host: RankHost;
  /** The context that code reaching the thread outside any other belongs to: the rank's, while its launch runs. */
  setFallback(ctx: MeterContext | undefined): void;
  /** The rank's program has ended, just before its last message (Node writes the output end markers, `init.marker`, here). */
  ending(launch: number, init: WorkerInit): void;
}

/** A rank thread's side of the protocol, as serveRank returns it. */
export interface RankServer {
  /** Handles a message of the launcher (ToRank). */
  handle(m: ToRank): void;
  /**
   * The rank's code threw where nothing catches it (an uncaught exception,
   * a rejection nobody handles): its program fails with `error` now, as a
   * Node worker thread that dies of it does. False if no program runs.
   */
  failRunning(error: unknown): boolean;
}

/**
 * Serves a rank thread: a 'run' starts that launch's rank program, and
 * anything addressed to an earlier launch is stale and dropped.
 */
export function serveRank(thread: RankThread): RankServer {
  let current: { launch: number; comm: Comm; rt: RankRuntime; end: (m: FromRank) => void } | null = null;

  const run = (launch: number, init: WorkerInit): void => {
    thread.beginLaunch?.(launch);
    const post = (m: FromRank, transfer: ArrayBuffer[] = []) => thread.post(m, transfer);
    let idleScheduled = false;
    // Tell the fabric when this rank has nothing left to do but wait: after a
    // wait is posted, once the event loop comes round with the wait still open.
    const scheduleIdle = () => {
      if (idleScheduled) return;
      idleScheduled = true;
      thread.nextTask(() => {
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
      thread.host,
    );
    const comm = createComm(init.rank, init.worldSize, rt.transport(), init.seed, init.faults, rt);
    rt.attach(comm);
    // Code that reaches this thread outside any async context is this rank's.
    thread.setFallback(rt.rootContext);
    const end = (m: FromRank, transfer: ArrayBuffer[] = []) => {
      // Posted before the launch ends: cloning the message runs whatever of the program's code it holds (a
      // getter of a returned object, of an error's field), which must run in the launch, not after it.
      post(m, transfer);
      thread.ending(launch, init);
      if (current?.launch === launch) {
        current = null;
        thread.setFallback(undefined);
      }
    };
    current = { launch, comm, rt, end };
    rt.run(() => main(thread, init, comm, rt)).then(
      (value) =>
        // The last memory point starts a fresh job, with nothing of the program's last one in the way.
        thread.nextTask(() => {
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
  };

  return {
    handle: (m: ToRank) => {
      if (m.t === 'run') return void run(m.launch, m.init);
      // Anything addressed to an earlier launch is stale.
      if (!current || m.launch !== current.launch) return;
      if (m.t === 'complete') current.rt.arrive(m.id, { payload: m.payload, error: m.error ? decodeError(m.error) : undefined, vtUs: m.vtUs, readyUs: m.readyUs });
      else if (m.t === 'peerFailed') notePeerFailed(current.comm, m.rank, m.root, m.message);
    },
    failRunning: (error: unknown) => {
      if (!current) return false;
      const { launch, rt, end } = current;
      end({ t: 'fail', launch, error: encodeError(error), device: rt.report() });
      return true;
    },
  };
}

async function main(thread: RankThread, init: WorkerInit, comm: Comm, rt: RankRuntime): Promise<unknown> {
  const loaded = thread.load(init);
  const mod = loaded instanceof Promise ? await loaded : loaded;
  const fn = mod[init.exportName];
  if (typeof fn !== 'function') {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    throw new TypeError(`${init.module} has no exported function '${init.exportName}'; its exported functions are: ${names.join(', ') || '(none)'}`);
  }
  // Loading ran in the rank's context, so what the modules allocated and keep is counted; the loader's garbage is not.
  await new Promise<void>((r) => thread.nextTask(r));
  rt.programStarts();
  const args = decodeValue(init.args) as unknown[];
  rt.adoptArgs(args);
  return fn(comm, ...args);
}
