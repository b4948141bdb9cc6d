/**
 * The entry point of a rank worker: builds this rank's Comm over the worker
 * port, imports the rank program's module, runs it, and reports how it ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { Comm, type Transport } from '../comm.ts';
import { decodeError, decodeValue, encodeError, encodeValue } from '../wire.ts';
import type { FromRank, ToRank, WorkerInit } from './protocol.ts';

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: FromRank, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

let comm: Comm;
let idleScheduled = false;
// Tell the fabric when this rank has nothing left to do but wait: after a wait
// is posted, once the event loop comes round with the wait still open.
function scheduleIdle(): void {
  if (idleScheduled) return;
  idleScheduled = true;
  setImmediate(() => {
    idleScheduled = false;
    if (comm._pendingWaits > 0) post({ t: 'idle' });
  });
}

const transport: Transport = {
  send: (dst, tag, payload) => post({ t: 'send', dst, tag, payload }, [payload.buffer]),
  post: (id, src, tag, expect) => post({ t: 'post', id, src, tag, expect }),
  wait: (id) => {
    post({ t: 'wait', id });
    scheduleIdle();
  },
  announce: (index, call) => post({ t: 'announce', index, call }),
  barrier: (id) => {
    post({ t: 'barrier', id });
    scheduleIdle();
  },
};
comm = new Comm(init.rank, init.worldSize, transport, init.seed, init.faults);

port.on('message', (m: ToRank) => {
  if (m.t === 'complete') comm._complete(m.id, { payload: m.payload, error: m.error ? decodeError(m.error) : undefined, vtUs: m.vtUs });
  else if (m.t === 'peerFailed') comm._peerFailed(m.rank, m.root, m.message);
});

async function main(): Promise<void> {
  const mod = (await import(pathToFileURL(init.module).href)) as Record<string, unknown>;
  const fn = mod[init.exportName];
  if (typeof fn !== 'function') {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    throw new TypeError(`${init.module} has no exported function '${init.exportName}'; its exported functions are: ${names.join(', ') || '(none)'}`);
  }
  const args = decodeValue(init.args) as unknown[];
  const value = await fn(comm, ...args);
  const transfer: ArrayBuffer[] = [];
  post({ t: 'done', value: encodeValue(value, transfer) }, transfer);
}

main().then(
  () => port.unref(),
  (e: unknown) => {
    post({ t: 'fail', error: encodeError(e) });
    port.unref();
  },
);
