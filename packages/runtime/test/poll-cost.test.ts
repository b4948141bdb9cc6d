/**
 * The launching thread's polling (LaunchSpec.pollUs) keeps its full window
 * only while it pays: while it spins little per thread wake-up it saves.
 */
import { describe, expect, it } from 'vitest';
import { PollCost } from '../src/backends/poll.ts';

/** How many of the next `n` polls would run in full. */
function fullPolls(cost: PollCost, n: number): number {
  let full = 0;
  for (let i = 0; i < n; i++) if (cost.worthIt()) full++;
  return full;
}

describe('PollCost', () => {
  it('keeps polling while each saved wake-up costs little spinning (a ping-pong: 0.04 ms each)', () => {
    const cost = new PollCost();
    for (let i = 0; i < 200; i++) cost.record(0.2, 5);
    expect(fullPolls(cost, 64)).toBe(64);
  });

  it('backs off to one probe in 16 when spinning saves few wake-ups (ranks computing between messages: 0.3 ms each)', () => {
    const cost = new PollCost();
    for (let i = 0; i < 200; i++) cost.record(0.3, 1);
    expect(fullPolls(cost, 64)).toBe(4);
  });

  it('backs off when polls save nothing at all, and polls in full again once they pay', () => {
    const cost = new PollCost();
    for (let i = 0; i < 100; i++) cost.record(0.1, 0);
    expect(fullPolls(cost, 32)).toBe(2);
    for (let i = 0; i < 100; i++) cost.record(0.1, 4);
    expect(fullPolls(cost, 32)).toBe(32);
  });

  it('starts out polling', () => {
    expect(new PollCost().worthIt()).toBe(true);
  });
});
