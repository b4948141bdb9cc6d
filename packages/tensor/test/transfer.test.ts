/**
 * A tensor's transferable form is plain data (dtype, shape, an ArrayBuffer
 * holding exactly its elements) that survives structuredClone and
 * postMessage, and turns back into an equal tensor.
 */
import { describe, expect, it } from 'vitest';
import { MessageChannel } from 'node:worker_threads';
import { ShapeError, type TransferableTensor, arange, fromTransferable, tensor, toTransferable } from '../src/index.ts';

describe('toTransferable and fromTransferable', () => {
  for (const dtype of ['float32', 'float64'] as const) {
    it(`round-trip ${dtype} values, shape and dtype`, () => {
      const t = tensor([[0.1, -2.5, 3], [1e-30, 7, -0]], { dtype });
      const form = toTransferable(t);
      expect(form.dtype).toBe(dtype);
      expect(form.shape).toEqual([2, 3]);
      expect(form.buffer.byteLength).toBe(6 * (dtype === 'float64' ? 8 : 4));
      const back = fromTransferable(form);
      expect(back.dtype).toBe(dtype);
      expect(back.shape).toEqual([2, 3]);
      expect(back.toArray()).toEqual(t.toArray());
    });
  }

  it('round-trip a scalar and an empty tensor', () => {
    expect(fromTransferable(toTransferable(tensor(3.5))).toArray()).toEqual([3.5]);
    expect(fromTransferable(toTransferable(tensor(3.5))).shape).toEqual([]);
    const empty = fromTransferable(toTransferable(tensor([], { shape: [2, 0] })));
    expect(empty.shape).toEqual([2, 0]);
    expect(empty.numel).toBe(0);
  });

  it('hold exactly the elements of a non-contiguous view, row-major', () => {
    const base = arange(12, { dtype: 'float64' }).reshape(3, 4);
    for (const view of [base.transpose(), base.slice(1, 1, 3), base.slice(0, 1, 2), base.permute(1, 0).slice(0, 2)]) {
      const form = toTransferable(view);
      expect(form.shape).toEqual([...view.shape]);
      expect(Array.from(new Float64Array(form.buffer))).toEqual(view.toArray());
      expect(fromTransferable(form).toArray()).toEqual(view.toArray());
    }
  });

  it('the form\'s buffer is a copy: mutating it does not change the source', () => {
    const whole = tensor([1, 2, 3]);
    const view = arange(6).reshape(2, 3).slice(0, 1);
    for (const t of [whole, view]) {
      const before = t.toArray();
      const form = toTransferable(t);
      new Float32Array(form.buffer).fill(-1);
      expect(t.toArray()).toEqual(before);
    }
  });

  it('fromTransferable takes the buffer without copying it', () => {
    const form = toTransferable(tensor([1, 2]));
    const t = fromTransferable(form);
    new Float32Array(form.buffer)[0] = 9;
    expect(t.toArray()).toEqual([9, 2]);
  });

  it('survive structuredClone with the buffer transferred, leaving the source intact', () => {
    const t = tensor([[1, 2], [3, 4]], { dtype: 'float64' });
    const form = toTransferable(t);
    const cloned = structuredClone(form, { transfer: [form.buffer] });
    expect(form.buffer.byteLength).toBe(0); // moved, not copied
    expect(fromTransferable(cloned).toArray()).toEqual([1, 2, 3, 4]);
    expect(t.toArray()).toEqual([1, 2, 3, 4]);
  });

  it('cross a MessageChannel with postMessage', async () => {
    const { port1, port2 } = new MessageChannel();
    try {
      const received = new Promise<TransferableTensor>((resolve) => port2.once('message', resolve));
      const form = toTransferable(tensor([0.5, 1.5, 2.5]).reshape(3, 1));
      port1.postMessage(form, [form.buffer]);
      const back = fromTransferable(await received);
      expect(back.shape).toEqual([3, 1]);
      expect(back.toArray()).toEqual([0.5, 1.5, 2.5]);
    } finally {
      port1.close();
      port2.close();
    }
  });

  it('fromTransferable rejects an unknown dtype, a non-ArrayBuffer and a size mismatch', () => {
    const buffer = new Float32Array(4).buffer;
    expect(() => fromTransferable({ dtype: 'int8' as 'float32', shape: [4], buffer })).toThrow(/unknown dtype "int8"/);
    expect(() => fromTransferable({ dtype: 'float32', shape: [4], buffer: new Float32Array(4) as unknown as ArrayBuffer })).toThrow(TypeError);
    expect(() => fromTransferable({ dtype: 'float32', shape: [5], buffer })).toThrow(ShapeError);
    expect(() => fromTransferable({ dtype: 'float64', shape: [4], buffer })).toThrow(/2 float64 elements does not fit shape \[4\]/);
  });
});
