/**
 * The op cost table (README, "What an op costs"): every op charges the FLOPs
 * and bytes of an ideal device kernel, and the meter turns them into virtual
 * time by the roofline max(flops / peak, bytes / bandwidth). Each case here
 * is the table's formula worked out by hand for one shape.
 */
import { describe, expect, it } from 'vitest';
import { RankMeter, runInContext, type DeviceModel, type OpFigures } from '../src/meter/index.ts';
import { nn, noGrad, ones, optim, randn, tensor, zeros, type Tensor } from '../src/index.ts';

// 1000 FLOPs/µs (1 GFLOP/s... per µs: 1e9 FLOP/s) in float32, half that in float64; 100 bytes/µs.
const DEVICE: DeviceModel = { name: 'test', flopsPerUs: { float32: 1000, float64: 500 }, memoryBytesPerUs: 100, capacityBytes: 1 << 30 };

/** Runs `fn` on a fresh meter and returns its per-op figures by kind, and the main stream's clock. */
function metered(fn: () => void, device: DeviceModel | null = DEVICE): { ops: Record<string, OpFigures>; vtUs: number; meter: RankMeter } {
  const meter = new RankMeter({ rank: 0, device });
  runInContext(meter.rootContext(), fn);
  const f = meter.figures();
  return { ops: Object.fromEntries(f.ops.map((o) => [o.kind, o])), vtUs: f.vtUs, meter };
}

describe('what an op charges', () => {
  it('matmul [m,k]·[k,n]: 2·m·n·k FLOPs, reads both operands and writes the result once', () => {
    const a = randn([6, 5], { seed: 1 });
    const b = randn([5, 4], { seed: 2 });
    const { ops } = metered(() => a.matmul(b));
    expect(ops.matmul).toEqual({ kind: 'matmul', calls: 1, flops: 2 * 6 * 4 * 5, bytes: (6 * 5 + 5 * 4 + 6 * 4) * 4, computeUs: Math.max(240 / 1000, (74 * 4) / 100) });
  });

  it('batched matmul with a broadcast operand reads that operand once', () => {
    const a = randn([3, 6, 5], { seed: 1 });
    const w = randn([5, 4], { seed: 2 });
    const { ops } = metered(() => a.matmul(w));
    expect(ops.matmul!.flops).toBe(2 * 3 * 6 * 4 * 5);
    expect(ops.matmul!.bytes).toBe((3 * 6 * 5 + 5 * 4 + 3 * 6 * 4) * 4);
  });

  it('elementwise ops: one FLOP per output element; bytes of every input element read and every output element written', () => {
    const x = randn([4, 3], { seed: 1 });
    const bias = randn([3], { seed: 2 });
    const { ops } = metered(() => {
      x.add(bias); // broadcast: reads 12 + 3, writes 12
      x.exp(); // reads 12, writes 12
      x.mul(2); // the scalar is a 1-element tensor: reads 12 + 1
    });
    expect(ops.add).toMatchObject({ flops: 12, bytes: (12 + 3 + 12) * 4 });
    expect(ops.exp).toMatchObject({ flops: 12, bytes: 24 * 4 });
    expect(ops.mul).toMatchObject({ flops: 12, bytes: (12 + 1 + 12) * 4 });
  });

  it('float64 uses the float64 peak and 8-byte elements', () => {
    const a = randn([64, 64], { seed: 1, dtype: 'float64' });
    const { ops } = metered(() => a.matmul(a));
    const flops = 2 * 64 ** 3;
    const bytes = 3 * 64 * 64 * 8;
    expect(ops.matmul).toMatchObject({ flops, bytes, computeUs: Math.max(flops / 500, bytes / 100) });
  });

  it('reductions: one FLOP per element read, whatever the layout; no charge for the copy the implementation makes', () => {
    const x = randn([4, 6], { seed: 1 });
    const { ops } = metered(() => {
      x.sum(0); // reduces a non-last dim: dtlab copies rows internally, a device would not
      x.transpose(0, 1).max(1);
    });
    expect(ops.sum).toEqual({ kind: 'sum', calls: 1, flops: 24, bytes: (24 + 6) * 4, computeUs: (30 * 4) / 100 });
    expect(ops.max).toMatchObject({ calls: 1, flops: 24, bytes: (24 + 6) * 4 });
    expect(ops.clone).toBeUndefined();
  });

  it('views are free; copies move their bytes twice (read and write) and do no arithmetic', () => {
    const x = randn([4, 6], { seed: 1 });
    const { ops } = metered(() => {
      const v = x.reshape([-1]).reshape([6, 4]).transpose(0, 1).slice(0, 1, 3).unsqueeze(0).expand([3, 2, 6]).detach();
      void v;
      x.transpose(0, 1).contiguous(); // a real copy
      x.to('float64'); // reads 4-byte elements, writes 8-byte ones
    });
    expect(Object.keys(ops).sort()).toEqual(['cast', 'clone']);
    expect(ops.clone).toMatchObject({ flops: 0, bytes: 24 * 4 * 2 });
    expect(ops.cast).toMatchObject({ flops: 0, bytes: 24 * (4 + 8) });
  });

  it('in-place ops and creation charge like their out-of-place peers', () => {
    const { ops } = metered(() => {
      const t = zeros([10]); // writes 10 elements
      noGrad(() => {
        t.add_(ones([10])); // reads 10 + 10, writes 10
        t.fill_(3); // writes 10
      });
    });
    expect(ops.full).toMatchObject({ calls: 2, flops: 0, bytes: 2 * 10 * 4 });
    expect(ops.add_).toMatchObject({ flops: 10, bytes: 30 * 4 });
    expect(ops.fill_).toMatchObject({ flops: 0, bytes: 10 * 4 });
  });

  it('backward is charged as the ops its rules run: y = a·b costs one mul forward and two in backward', () => {
    const a = tensor([1, 2, 3], { requiresGrad: true });
    const b = tensor([4, 5, 6], { requiresGrad: true });
    const { ops } = metered(() => a.mul(b).sum().backward());
    expect(ops.mul!.calls).toBe(3);
    expect(ops.sum!.calls).toBe(1);
    // The leaves' first gradients are private copies of what the rule returned.
    expect(ops.clone!.calls).toBe(2);
  });

  it('an Adam step is one fused kernel: 16 FLOPs per element, reads p, g, m, v and writes p, m, v', () => {
    const model = new nn.Linear(3, 2, { seed: 0 });
    const opt = new optim.Adam(model.parameters(), { lr: 0.1 });
    for (const p of model.parameters()) p.grad = ones([...p.shape]);
    const { ops } = metered(() => opt.step());
    const n = 3 * 2 + 2;
    expect(ops['adam step']).toMatchObject({ calls: 2, flops: 16 * n, bytes: 7 * n * 4 });
  });
});

describe('virtual time', () => {
  it('is the roofline of each op, added up: compute-bound and memory-bound ops', () => {
    const a = randn([32, 32], { seed: 1 });
    const { ops, vtUs } = metered(() => {
      a.matmul(a); // 65536 FLOPs / 1000 = 65.536 µs; 12288 bytes / 100 = 122.88 µs: memory-bound on this device
      a.add(a); // 1024 FLOPs, 12288 bytes: memory-bound
    });
    expect(ops.matmul!.computeUs).toBe(122.88);
    expect(ops.add!.computeUs).toBe(122.88);
    expect(vtUs).toBe(122.88 * 2);
    const fast: DeviceModel = { ...DEVICE, memoryBytesPerUs: 1e6 };
    expect(metered(() => a.matmul(a), fast).ops.matmul!.computeUs).toBe(65.536);
  });

  it('costs nothing without a device, but FLOPs and bytes are still counted', () => {
    const a = randn([8, 8], { seed: 1 });
    const { ops, vtUs } = metered(() => a.matmul(a), null);
    expect(vtUs).toBe(0);
    expect(ops.matmul).toMatchObject({ flops: 2 * 8 ** 3, computeUs: 0 });
  });

  it('work outside any meter context is not charged anywhere (and runs as before)', () => {
    const meter = new RankMeter({ rank: 0, device: DEVICE });
    const a = randn([4, 4], { seed: 1 });
    const t: Tensor = a.matmul(a);
    expect(t.shape).toEqual([4, 4]);
    expect(meter.figures().flops).toBe(0);
  });
});

describe('regions', () => {
  it('attribute the ops inside them, inclusive of nested regions; a label nested in itself counts once', () => {
    const meter = new RankMeter({ rank: 0, device: DEVICE });
    const x = randn([10], { seed: 1 });
    const root = meter.rootContext();
    const outer = meter.enterRegion(root, 'step');
    runInContext(outer, () => x.exp());
    const inner = meter.enterRegion(outer, 'forward');
    runInContext(inner, () => x.add(x));
    const again = meter.enterRegion(inner, 'step');
    runInContext(again, () => x.neg());
    meter.exitRegion(again);
    meter.exitRegion(inner);
    meter.exitRegion(outer);
    const regions = Object.fromEntries(meter.figures().regions.map((r) => [r.label, r]));
    const exp = (10 + 10) * 4 / 100;
    const add = (20 + 10) * 4 / 100;
    expect(regions.step).toMatchObject({ calls: 1, flops: 30, computeUs: exp + add + exp, totalUs: exp + add + exp });
    expect(regions.forward).toMatchObject({ calls: 1, flops: 20, computeUs: add + exp });
  });
});
