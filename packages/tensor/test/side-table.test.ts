/**
 * The memory tracker's side table (src/meter/side-table.ts): a value per
 * object, kept on the object where no other code can see or change it.
 */
import { describe, expect, it } from 'vitest';
import { sideTable } from '../src/meter/side-table.ts';

describe('sideTable', () => {
  it('gives back what was set for each object, and nothing for others', () => {
    const t = sideTable<number>();
    const a = new ArrayBuffer(8);
    const b = new ArrayBuffer(8);
    t.set(a, 1);
    expect(t.get(a)).toBe(1);
    expect(t.get(b)).toBeUndefined();
    t.set(a, 2); // set again: replaced, not refused
    expect(t.get(a)).toBe(2);
  });

  it('keeps each table apart: one table never sees what another set', () => {
    const [t1, t2] = [sideTable<string>(), sideTable<string>()];
    const a = new ArrayBuffer(8);
    t1.set(a, 'rank 0');
    expect(t2.get(a)).toBeUndefined();
    t2.set(a, 'rank 1');
    expect([t1.get(a), t2.get(a)]).toEqual(['rank 0', 'rank 1']);
  });

  it('leaves nothing the object itself shows: no key, no symbol, the same prototype and size', () => {
    const t = sideTable<object>();
    const a = new ArrayBuffer(16);
    t.set(a, { secret: true });
    expect(Reflect.ownKeys(a)).toEqual([]);
    expect(Object.getPrototypeOf(a)).toBe(ArrayBuffer.prototype);
    expect(a.byteLength).toBe(16);
    expect(JSON.stringify(Object.getOwnPropertyDescriptors(a))).toBe('{}');
    // and a copy of the buffer (as a message is) carries none of it
    expect(t.get(structuredClone(a))).toBeUndefined();
  });

  it('works on objects frozen before or after', () => {
    const t = sideTable<number>();
    const before = Object.freeze({});
    t.set(before, 3);
    expect(t.get(before)).toBe(3);
    const after = {};
    t.set(after, 4);
    Object.freeze(after);
    t.set(after, 5);
    expect(t.get(after)).toBe(5);
  });
});
