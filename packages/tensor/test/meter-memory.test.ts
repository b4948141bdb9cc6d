/**
 * Device memory on one meter: allocations count at once, frees are found
 * at points (a forced collection), labels follow what a buffer became, and
 * an allocation past the capacity fails in CUDA's way. The allocation hooks
 * count raw buffers a program makes itself, however it makes them.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { RankMeter, installAllocationHooks, runInContext, type DeviceModel, type RegistryWithCleanup } from '../src/meter/index.ts';
import { installHostHooks } from '../src/meter/hooks-host.ts';
import { nn, optim, randn, zeros, type Tensor } from '../src/index.ts';

v8.setFlagsFromString('--expose-gc');
v8.setFlagsFromString('--harmony-weak-refs-with-cleanup-some');
const gc = vm.runInNewContext('gc') as () => void;
// A registry class with cleanupSome, from a context made after the flag: points may then run anywhere.
const Registry = vm.runInNewContext('FinalizationRegistry') as RegistryWithCleanup;
const device = (capacityBytes: number): DeviceModel => ({ name: 'tiny', flopsPerUs: { float32: 1e6, float64: 1e6 }, memoryBytesPerUs: 1e6, capacityBytes });
const meterOf = (capacityBytes = 1 << 26) => new RankMeter({ rank: 3, device: device(capacityBytes), gc, gcEveryBytes: 0 });
/** A fresh job: WeakRefs made in the current one keep their targets alive until it ends (KeepDuringJob). */
const nextJob = () => new Promise<void>((r) => setImmediate(r));

beforeAll(() => {
  installAllocationHooks();
});

describe('tensor memory', () => {
  it('counts storage when it is allocated and stops at the first point after it became unreachable', async () => {
    const meter = meterOf();
    const mem = meter.memory!;
    let keep: Tensor | null = null;
    runInContext(meter.rootContext(), () => {
      keep = zeros([1000]);
      zeros([500]);
    });
    expect(mem.inUseBytes).toBe(6000);
    await nextJob();
    mem.point(true);
    expect(mem.inUseBytes).toBe(4000);
    expect(mem.peakBytes).toBe(6000);
    keep = null;
    void keep;
    await nextJob();
    mem.point(true);
    expect(mem.inUseBytes).toBe(0);
    expect(mem.figures()).toMatchObject({ allocatedBytes: 6000, allocations: 2, peakBytes: 6000, collections: 2 });
  });

  it('labels parameters, gradients and optimizer state as such', async () => {
    const meter = meterOf();
    const { model, opt } = runInContext(meter.rootContext(), () => {
      const model = new nn.Linear(4, 3, { seed: 1 });
      const opt = new optim.Adam(model.parameters(), { lr: 0.1 });
      model.forward(randn([2, 4], { seed: 2 })).sum().backward();
      opt.step();
      return { model, opt };
    });
    await nextJob();
    meter.memory!.point(true);
    const byLabel = meter.figures().memory!.inUseByLabel;
    const p = (4 * 3 + 3) * 4;
    expect(byLabel.parameter).toBe(p);
    expect(byLabel.grad).toBe(p);
    expect(byLabel['optimizer state']).toBe(2 * p);
    void model;
    void opt;
  });

  it('lists live buffers by label, shape and dtype in a snapshot', async () => {
    const meter = meterOf();
    const held = runInContext(meter.rootContext(), () => [zeros([2, 3]), zeros([2, 3]), zeros([5], { dtype: 'float64' })]);
    await nextJob();
    expect(meter.snapshot()).toEqual([
      { label: 'full', shape: [2, 3], dtype: 'float32', count: 2, bytes: 48 },
      { label: 'full', shape: [5], dtype: 'float64', count: 1, bytes: 40 },
    ]);
    void held;
  });

  it('past the capacity: an OutOfMemoryError in CUDA\'s shape, after a collection found nothing to free', () => {
    const meter = meterOf(10_000);
    const held = runInContext(meter.rootContext(), () => zeros([2000]));
    let err: (Error & Record<string, unknown>) | undefined;
    runInContext(meter.rootContext(), () => {
      try {
        held.matmul(zeros([2000, 2]));
      } catch (e) {
        err = e as Error & Record<string, unknown>;
      }
    });
    expect(err?.name).toBe('OutOfMemoryError');
    expect(err).toMatchObject({ rank: 3, label: 'full', shape: [2000, 2], requestedBytes: 16000, inUseBytes: 8000, capacityBytes: 10_000 });
    expect(meter.figures().memory!.refused).toBe(1);
  });
});

describe('raw buffers a program allocates itself', () => {
  /** Bytes counted for what `make` allocates (and keeps). */
  async function counted(make: () => unknown): Promise<{ bytes: number; labels: string[] }> {
    const meter = meterOf();
    const kept = runInContext(meter.rootContext(), make);
    await nextJob();
    meter.memory!.point(true);
    const f = meter.figures().memory!;
    void kept;
    return { bytes: f.inUseBytes, labels: Object.keys(f.inUseByLabel) };
  }

  it.each<[string, () => unknown, number]>([
    ['new Float32Array(n)', () => new Float32Array(100), 400],
    ['new Float64Array(array)', () => new Float64Array([1, 2, 3]), 24],
    ['new ArrayBuffer(n)', () => new ArrayBuffer(1000), 1000],
    ['a resizable ArrayBuffer (its maximum)', () => new (ArrayBuffer as unknown as new (n: number, o: object) => ArrayBuffer)(10, { maxByteLength: 4096 }), 4096],
    ['.slice()', () => { const a = new Float32Array(10); return [a, a.slice(2)]; }, 40 + 32],
    ['.map()', () => { const a = new Float32Array(10); return [a, a.map((x) => x + 1)]; }, 80],
    ['Float32Array.from', () => Float32Array.from({ length: 50 }, () => 1), 200],
    ['.toReversed()', () => { const a = new Int32Array(8); return [a, (a as unknown as { toReversed(): Int32Array }).toReversed()]; }, 64],
    ['a subclass', () => new (class Moments extends Float32Array {})(25), 100],
    ['ArrayBuffer.prototype.slice', () => { const b = new ArrayBuffer(64); return [b, b.slice(0, 16)]; }, 80],
    ['structuredClone', () => structuredClone({ m: new Float32Array(30), v: [new Float64Array(5)] }), 120 + 40],
    ['Buffer.alloc', () => Buffer.alloc(300), 300],
    ['TextEncoder.encode', () => new TextEncoder().encode('x'.repeat(77)), 77],
    ['new Blob (hooked when first read)', () => new Blob(['y'.repeat(500)]), 500],
    ['WebAssembly.Memory', () => new (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number }) => object } }).WebAssembly.Memory({ initial: 2 }), 2 * 65536],
  ])('%s', async (_what, make, bytes) => {
    expect((await counted(make)).bytes).toBe(bytes);
  });

  it("Node's lazily loaded globals are hooked when first read, not loaded by installing the hooks", async () => {
    // A global object like Node's: Response is a getter that loads its module on first use.
    let loads = 0;
    // Made outside any meter context, as Node's own code makes a body: only the hook can count it.
    const body = new ArrayBuffer(64);
    class Response {
      arrayBuffer(): Promise<ArrayBuffer> {
        return Promise.resolve(body);
      }
    }
    const original = Response.prototype.arrayBuffer;
    const g: Record<string, unknown> = { ArrayBuffer };
    Object.defineProperty(g, 'Response', {
      get() {
        loads++;
        Object.defineProperty(g, 'Response', { value: Response, writable: true, configurable: true });
        return Response;
      },
      configurable: true,
      enumerable: false,
    });
    expect(installHostHooks(g)).toContain('Response');
    expect(loads).toBe(0);
    expect(Object.getOwnPropertyDescriptor(g, 'Response')!.get).toBeTypeOf('function');
    const R = g.Response as typeof Response;
    expect(R).toBe(Response);
    expect(loads).toBe(1);
    expect(R.prototype.arrayBuffer).not.toBe(original);
    expect(g.Response).toBe(Response);
    expect(loads).toBe(1);
    // What the hooked method hands back is counted, in a meter context.
    const meter = meterOf();
    const out = await runInContext(meter.rootContext(), () => new R().arrayBuffer());
    await nextJob();
    meter.memory!.point(true);
    expect(out).toBe(body);
    expect(meter.figures().memory!.inUseByLabel['Response.arrayBuffer']).toBe(64);
  });

  it('a view of memory already counted adds nothing', async () => {
    expect((await counted(() => { const a = new Float32Array(10); return [a, new Uint8Array(a.buffer), a.subarray(2)]; })).bytes).toBe(40);
  });

  it('wrapped constructors still behave: instanceof, species, names, BYTES_PER_ELEMENT, isView', () => {
    const a = new Float32Array([1, 2, 3]);
    expect(a).toBeInstanceOf(Float32Array);
    expect(a.slice(1)).toBeInstanceOf(Float32Array);
    expect(Array.from(a.map((x) => x * 2))).toEqual([2, 4, 6]);
    expect(Float32Array.name).toBe('Float32Array');
    expect(Float32Array.BYTES_PER_ELEMENT).toBe(4);
    expect(ArrayBuffer.isView(a)).toBe(true);
    expect(Object.prototype.toString.call(new ArrayBuffer(1))).toBe('[object ArrayBuffer]');
    expect(() => (Float32Array as unknown as (n: number) => unknown)(3)).toThrow(TypeError);
    expect(Buffer.from('hi').toString()).toBe('hi');
  });

  it('outside a meter context nothing is counted anywhere', async () => {
    const meter = meterOf();
    const raw = new Float32Array(1000);
    await nextJob();
    meter.memory!.point(true);
    expect(meter.figures().memory!.allocatedBytes).toBe(0);
    void raw;
  });
});

describe('the peak, where points may run in the middle of a computation', () => {
  /** Allocates `count` temporaries of 4000 bytes one after the other, keeping `kept` of them; returns the peak. */
  function peakOf(opts: { registry?: boolean; peakTolerance?: number }, count: number, kept: number): number {
    const meter = new RankMeter({ rank: 0, device: device(1 << 26), gc, gcEveryBytes: 0, ...(opts.registry ? { registry: Registry } : {}), ...(opts.peakTolerance ? { peakTolerance: opts.peakTolerance } : {}) });
    const keep: Tensor[] = [];
    runInContext(meter.rootContext(), () => {
      for (let i = 0; i < count; i++) {
        const t = zeros([1000]);
        if (i < kept) keep.push(t);
      }
    });
    void keep;
    return meter.figures().memory!.peakBytes;
  }

  it('without a tolerance counts every temporary until the next point: a loose bound', () => {
    expect(peakOf({ registry: true }, 100, 0)).toBe(100 * 4000);
  });

  it('with a tolerance collects before each new peak, so the peak is within it of the true one', () => {
    // At most two temporaries are reachable at once (the new one, and the last one while a local still
    // holds it): the true peak is 8000 bytes, and the figure at most 10% above.
    const peak = peakOf({ registry: true, peakTolerance: 0.1 }, 100, 0);
    expect(peak).toBeGreaterThanOrEqual(4000);
    expect(peak).toBeLessThanOrEqual(1.1 * 8000);
    // Keeping 50 of them: the true peak is 50 of them and those two, and the figure at most 10% above.
    const kept = peakOf({ registry: true, peakTolerance: 0.1 }, 100, 50);
    expect(kept).toBeGreaterThanOrEqual(50 * 4000);
    expect(kept).toBeLessThanOrEqual(1.1 * 52 * 4000);
  });

  it('is the same in every run', () => {
    const runs = Array.from({ length: 5 }, () => peakOf({ registry: true, peakTolerance: 0.1 }, 200, 70));
    expect(new Set(runs).size).toBe(1);
    // Hundreds of forced collections: seconds on a busy machine.
  }, 60_000);
});
