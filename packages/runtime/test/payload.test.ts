/**
 * The fabric carries tensors and nothing else: a payload whose shape does
 * not match its bytes, whose dimensions are not integers, or whose buffer is
 * shared memory could carry data that the trace does not count, or share
 * memory between ranks. Only a rank that bypasses its Comm can send one, and
 * that rank fails with an error that says what to do.
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '../src/index.ts';
import { Fabric, type Payload } from '../src/fabric.ts';
import { program } from './support.ts';

type Raw = { transport: { send(dst: number, tag: number, payload: unknown): void } };
const NOT_A_TENSOR = /^rank 0: send to rank 1: the message is not a tensor \(a dtype, a shape of non-negative integers and an ArrayBuffer of exactly that many elements\); send tensors through comm\.send or comm\.isend$/;

describe('a payload that is not a tensor', () => {
  const bad: [string, unknown][] = [
    ['a shape that does not match the bytes', { dtype: 'float32', shape: [2], buffer: new ArrayBuffer(4) }],
    ['a dimension that is not an integer', { dtype: 'float32', shape: [0, 1.5], buffer: new ArrayBuffer(0) }],
    ['a dimension that is not a number', { dtype: 'float32', shape: [0, {}], buffer: new ArrayBuffer(0) }],
    ['shared memory', { dtype: 'float32', shape: [1], buffer: new SharedArrayBuffer(4) }],
    ['an unknown dtype', { dtype: 'int8', shape: [4], buffer: new ArrayBuffer(4) }],
  ];
  it.each(bad)('%s: refused on the inline backend, nothing delivered', async (_what, payload) => {
    const r = await launch({
      worldSize: 2,
      timeoutMs: 5_000,
      program: async (comm: Comm) => {
        if (comm.rank === 0) (comm as unknown as Raw).transport.send(1, 0, payload);
        else await comm.recv(0);
      },
    });
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error!.message).toMatch(NOT_A_TENSOR);
    expect(r.trace).toEqual([]);
  });

  it('anything else in the payload object stays behind: only dtype, shape and buffer arrive', () => {
    // What the fabric hands the receiving rank's backend, watched at the fabric itself.
    const delivered: object[] = [];
    const fabric = new Fabric({ worldSize: 2, waitingMeansIdle: true }, { complete: (_rank, _id, c) => void delivered.push(c.payload!), peerFailed: () => {}, deadlock: () => {} });
    fabric.send(0, 1, 0, { dtype: 'float32', shape: [1], buffer: new Float32Array([7]).buffer, smuggled: [1, 2, 3] } as unknown as Payload);
    fabric.post(1, 1, 0, 0);
    fabric.wait(1, 1);
    fabric.close();
    expect(delivered.map((p) => Object.keys(p).sort())).toEqual([['buffer', 'dtype', 'shape']]);
    expect(Array.from(new Float32Array((delivered[0] as Payload).buffer))).toEqual([7]);
  });

  it('a destination or tag that is not valid: refused', async () => {
    const r = await launch({
      worldSize: 2,
      timeoutMs: 5_000,
      program: async (comm: Comm) => {
        if (comm.rank === 0) (comm as unknown as Raw).transport.send(2, 0, { dtype: 'float32', shape: [0], buffer: new ArrayBuffer(0) });
      },
    });
    expect(r.ranks[0]!.error!.message).toBe('rank 0: send: the destination must be a rank in [0, 2) and the tag a non-negative integer, got 2 and 0');
  });

  it('shared memory on the workers backend: that rank fails, and its peer hears of it', async () => {
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('forged-payload', 'sharedMemory'), timeoutMs: 15_000 });
    expect(r.ranks[0]!.status).toBe('error');
    expect(r.ranks[0]!.error!.message).toMatch(NOT_A_TENSOR);
    expect(r.ranks[1]!.error!.name).toBe('RankFailedError');
    expect(r.trace).toEqual([]);
  }, 30_000);
});
