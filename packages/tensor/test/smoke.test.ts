import { describe, expect, it } from 'vitest';
import { tensor } from '../src/index.ts';

describe('tensor', () => {
  it('adds with broadcasting', () => {
    expect(tensor([[1, 2], [3, 4]]).add(tensor([10, 20])).toArray()).toEqual([11, 22, 13, 24]);
  });
});
