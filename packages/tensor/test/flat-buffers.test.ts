/**
 * Flat buffers lay tensors end to end in one 1-D buffer: flatten/unflatten
 * round-trip, and FlatBuffer.adopt moves parameters into one buffer while
 * they keep their identity, values, gradients and optimizer behaviour.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FlatBuffer, ShapeError, Tensor, flattenTensors, nn, noGrad, optim, tensor, unflattenTensors } from '../src/index.ts';
import { numel, smallInts } from './support/reference.ts';
import { shapeArb } from './support/arbitraries.ts';

const shapesArb = fc.array(shapeArb({ maxRank: 3, maxDim: 4 }), { minLength: 0, maxLength: 5 });

describe('flattenTensors and unflattenTensors', () => {
  it('round-trip any list of shapes, and flatten concatenates in order', () => {
    fc.assert(
      fc.property(shapesArb, fc.nat(1000), (shapes, seed) => {
        const data = shapes.map((s, i) => smallInts(numel(s), seed + i));
        const ts = shapes.map((s, i) => tensor(data[i]!, { shape: s }));
        const flat = flattenTensors(ts);
        expect(flat.shape).toEqual([data.flat().length]);
        expect(flat.toArray()).toEqual(data.flat());
        const back = unflattenTensors(flat, shapes);
        back.forEach((b, i) => {
          expect(b.shape).toEqual(shapes[i]);
          expect(b.toArray()).toEqual(data[i]);
        });
      }),
      { seed: 801, numRuns: 150 },
    );
  });

  it('flattens non-contiguous views by their logical order', () => {
    const t = tensor([[1, 2, 3], [4, 5, 6]]);
    expect(flattenTensors([t.transpose(), t.slice(1, 1)]).toArray()).toEqual([1, 4, 2, 5, 3, 6, 2, 3, 5, 6]);
  });

  it('copies: the flat tensor does not share storage with the inputs', () => {
    const t = tensor([1, 2]);
    const flat = flattenTensors([t]);
    flat.fill_(0);
    expect(t.toArray()).toEqual([1, 2]);
  });

  it('promotes mixed dtypes, or converts to the dtype asked for', () => {
    expect(flattenTensors([tensor([1]), tensor([2], { dtype: 'float64' })]).dtype).toBe('float64');
    const f = flattenTensors([tensor([0.1], { dtype: 'float64' })], 'float32');
    expect(f.dtype).toBe('float32');
    expect(f.toArray()).toEqual([Math.fround(0.1)]);
  });

  it('unflatten gives views of the flat tensor (no copy)', () => {
    const flat = tensor([1, 2, 3, 4, 5, 6]);
    const [a, b] = unflattenTensors(flat.slice(0, 1), [[2], [1, 3]]) as [Tensor, Tensor];
    flat.slice(0, 3, 4).fill_(0);
    expect(a.toArray()).toEqual([2, 3]);
    expect(b.toArray()).toEqual([0, 5, 6]);
  });

  it('unflatten rejects a wrong element count, a non-1-D or a non-contiguous tensor', () => {
    expect(() => unflattenTensors(tensor([1, 2, 3]), [[2]])).toThrow(ShapeError);
    expect(() => unflattenTensors(tensor([[1, 2]]), [[2]])).toThrow(/contiguous 1-D tensor of 2 elements/);
    expect(() => unflattenTensors(tensor([[1, 2], [3, 4]]).transpose().slice(0, 0, 1).squeeze(), [[2]])).toThrow(ShapeError);
  });
});

describe('FlatBuffer.adopt', () => {
  const model = (seed = 1) => new nn.MLP([3, 4, 2], { seed, dtype: 'float64' });
  const x = tensor([[1, -1, 2], [0.5, 0, -3]], { dtype: 'float64' });
  const y = tensor([[1, 0], [0, 1]], { dtype: 'float64' });

  it('keeps parameter identity and values, and lays them out in order', () => {
    const m = model();
    const params = m.parameters();
    const before = params.map((p) => p.toArray());
    const fb = FlatBuffer.adopt(params);
    expect(m.parameters()).toEqual(params);
    m.parameters().forEach((p, i) => {
      expect(p).toBe(params[i]);
      expect(p.toArray()).toEqual(before[i]);
      expect(p.requiresGrad).toBe(true);
    });
    expect(fb.buffer.toArray()).toEqual(before.flat());
    expect(fb.numel).toBe(m.numParameters());
    expect(fb.offsets).toEqual([0, 12, 16, 24]);
    expect(fb.tensors).toEqual(params);
  });

  it('writes through the buffer change the parameters, and writes to a parameter change the buffer', () => {
    const m = model();
    const fb = FlatBuffer.adopt(m.parameters());
    const [w0, b0] = m.parameters() as [Tensor, Tensor];
    fb.buffer.slice(0, 12, 16).fill_(7); // the region of 0.bias
    expect(b0.toArray()).toEqual([7, 7, 7, 7]);
    noGrad(() => w0.zero_());
    expect(fb.buffer.toArray().slice(0, 12)).toEqual(new Array(12).fill(0));
  });

  it('adopts a non-contiguous view by its logical values', () => {
    const t = tensor([[1, 2], [3, 4]]).transpose();
    const fb = FlatBuffer.adopt([t]);
    expect(t.toArray()).toEqual([1, 3, 2, 4]);
    expect(fb.buffer.toArray()).toEqual([1, 3, 2, 4]);
  });

  it('adopted parameters still train: forward, backward and an optimizer step match an unadopted twin', () => {
    const a = model();
    const b = model();
    const fb = FlatBuffer.adopt(a.parameters());
    const optA = new optim.Adam(a.parameters(), { lr: 0.1 });
    const optB = new optim.Adam(b.parameters(), { lr: 0.1 });
    for (let step = 0; step < 3; step++) {
      for (const [m, opt] of [[a, optA], [b, optB]] as const) {
        opt.zeroGrad();
        nn.mseLoss(m.forward(x), y).backward();
        opt.step();
      }
    }
    a.parameters().forEach((p, i) => expect(p.toArray()).toEqual(b.parameters()[i]!.toArray()));
    expect(fb.buffer.toArray()).toEqual(b.parameters().flatMap((p) => p.toArray()));
  });

  it('flatGrads concatenates the gradients, with zeros where .grad is null', () => {
    const m = model();
    const fb = FlatBuffer.adopt(m.parameters());
    nn.mseLoss(m.forward(x), y).backward();
    const params = m.parameters();
    expect(fb.flatGrads().toArray()).toEqual(params.flatMap((p) => p.grad!.toArray()));
    params[1]!.grad = null;
    const expected = params.flatMap((p, i) => (i === 1 ? new Array(p.numel).fill(0) : p.grad!.toArray()));
    expect(fb.flatGrads().toArray()).toEqual(expected);
  });

  it('setGradsFrom makes each .grad a view of a flat gradient, which the optimizer then uses', () => {
    const m = model();
    const twin = model();
    const fb = FlatBuffer.adopt(m.parameters());
    nn.mseLoss(twin.forward(x), y).backward();
    // As after an all-reduce: one flat gradient, handed back to the parameters.
    const flat = flattenTensors(twin.parameters().map((p) => p.grad!));
    fb.setGradsFrom(flat);
    m.parameters().forEach((p, i) => expect(p.grad!.toArray()).toEqual(twin.parameters()[i]!.grad!.toArray()));
    flat.slice(0, 0, 1).fill_(123);
    expect(m.parameters()[0]!.grad!.toArray()[0]).toBe(123);
    flat.slice(0, 0, 1).copy_(twin.parameters()[0]!.grad!.reshape(-1).slice(0, 0, 1));
    new optim.SGD(m.parameters(), { lr: 0.5 }).step();
    new optim.SGD(twin.parameters(), { lr: 0.5 }).step();
    expect(fb.buffer.toArray()).toEqual(twin.parameters().flatMap((p) => p.toArray()));
  });

  it('setGradsFrom rejects a flat gradient of the wrong size', () => {
    const fb = FlatBuffer.adopt(model().parameters());
    expect(() => fb.setGradsFrom(tensor([1, 2, 3]))).toThrow(ShapeError);
  });
});
