/**
 * The fabric carries tensors and nothing else. Rank code reaches it only
 * through its Comm, which sends tensors' bytes: the Comm's transport and
 * control are out of its reach. Behind that, the fabric itself refuses a
 * payload whose shape does not match its bytes, whose dimensions are not
 * integers, or whose buffer is shared memory (it could carry data the trace
 * does not count, or share memory between ranks), and it counts every
 * number a receiver can read: an empty tensor's dimensions too.
 */
import { describe, expect, it } from 'vitest';
import { tensor, zeros } from '@dtlab/tensor';
import { Comm, launch } from '../src/index.ts';
import { Fabric, type Payload } from '../src/fabric.ts';

const NOT_A_TENSOR = /^rank 0: send to rank 1: the message is not a tensor \(a dtype, a shape of non-negative integers and an ArrayBuffer of exactly that many elements\); send tensors through comm\.send or comm\.isend$/;

/** A two-rank fabric whose deliveries land in `delivered`. */
function fabric(): { fabric: Fabric; delivered: (Payload | undefined)[] } {
  const delivered: (Payload | undefined)[] = [];
  const f = new Fabric({ worldSize: 2, waitingMeansIdle: true }, { complete: (_rank, _id, c) => void delivered.push(c.payload), peerFailed: () => {}, deadlock: () => {} });
  return { fabric: f, delivered };
}

describe('a payload that is not a tensor', () => {
  const bad: [string, unknown][] = [
    ['a shape that does not match the bytes', { dtype: 'float32', shape: [2], buffer: new ArrayBuffer(4) }],
    ['a dimension that is not an integer', { dtype: 'float32', shape: [0, 1.5], buffer: new ArrayBuffer(0) }],
    ['a dimension that is not a number', { dtype: 'float32', shape: [0, {}], buffer: new ArrayBuffer(0) }],
    ['shared memory in the shape', { dtype: 'float32', shape: [0, new SharedArrayBuffer(8)], buffer: new ArrayBuffer(0) }],
    ['a shared buffer', { dtype: 'float32', shape: [1], buffer: new SharedArrayBuffer(4) }],
    ['an unknown dtype', { dtype: 'int8', shape: [4], buffer: new ArrayBuffer(4) }],
    ['more dimensions than 32', { dtype: 'float32', shape: new Array(33).fill(1), buffer: new ArrayBuffer(4) }],
  ];
  it.each(bad)('%s: refused, nothing delivered or traced', (_what, payload) => {
    const { fabric: f, delivered } = fabric();
    f.post(1, 1, 0, 0);
    f.wait(1, 1);
    expect(() => f.send(0, 1, 0, payload as Payload)).toThrow(NOT_A_TENSOR);
    expect(delivered).toEqual([]);
    expect(f.trace).toEqual([]);
    f.close();
  });

  it('anything else in the payload object stays behind: only dtype, shape and buffer arrive', () => {
    const { fabric: f, delivered } = fabric();
    f.post(1, 1, 0, 0);
    f.wait(1, 1);
    f.send(0, 1, 0, { dtype: 'float32', shape: [1], buffer: new Float32Array([7]).buffer, smuggled: [1, 2, 3] } as Payload);
    expect(Object.keys(delivered[0]!).sort()).toEqual(['buffer', 'dtype', 'shape']);
    f.close();
  });

  it('a destination or tag that is not valid: refused', () => {
    const { fabric: f } = fabric();
    expect(() => f.send(0, 2, 0, { dtype: 'float32', shape: [0], buffer: new ArrayBuffer(0) })).toThrow('rank 0: send: the destination must be a rank in [0, 2) and the tag a non-negative integer, got 2 and 0');
    expect(() => f.send(0, 1, -1, { dtype: 'float32', shape: [0], buffer: new ArrayBuffer(0) })).toThrow(/got 1 and -1/);
    f.close();
  });
});

describe('every number a receiver can read is counted', () => {
  it('an empty tensor of several dimensions counts 8 bytes per dimension; [0] counts nothing', async () => {
    const r = await launch({
      worldSize: 2,
      program: async (comm: Comm) => {
        if (comm.rank === 0) {
          await comm.send(1, zeros([0]));
          await comm.send(1, zeros([0, 1000, 123456]));
          await comm.send(1, tensor([1, 2, 3]));
          return null;
        }
        return [(await comm.recv(0)).shape, (await comm.recv(0)).shape, (await comm.recv(0)).shape];
      },
    });
    expect(r.ranks[1]!.value).toEqual([[0], [0, 1000, 123456], [3]]);
    expect(r.trace.map((e) => e.bytes)).toEqual([0, 24, 12]);
    expect(r.stats[0]!.bytesSent).toBe(36);
  });
});

describe('rank code cannot reach past its Comm', () => {
  it('the transport and the control are unreachable, and a Comm cannot change or be made', async () => {
    const r = await launch({
      worldSize: 1,
      program: async (comm: Comm) => {
        const raw = comm as unknown as Record<string, unknown>;
        let assigned: string;
        try {
          raw['send'] = () => undefined;
          assigned = 'assigned';
        } catch (e) {
          assigned = (e as Error).constructor.name;
        }
        let made: string;
        try {
          new (Comm as unknown as new (...a: unknown[]) => Comm)({}, 0, 1, {}, 0);
          made = 'made';
        } catch (e) {
          made = (e as Error).message;
        }
        const work = comm.irecv(0);
        comm.isend(0, tensor([1]));
        await work.wait();
        return { keys: Reflect.ownKeys(comm), transport: typeof raw['transport'], complete: typeof raw['_complete'], frozen: Object.isFrozen(comm), workFrozen: Object.isFrozen(work), assigned, made };
      },
    });
    expect(r.ranks[0]!.value).toEqual({
      keys: ['rank', 'worldSize', 'seed'],
      transport: 'undefined',
      complete: 'undefined',
      frozen: true,
      workFrozen: true,
      assigned: 'TypeError',
      made: 'a Comm is made by the runtime for each rank of a launch: use the comm your rank program receives',
    });
  });
});
