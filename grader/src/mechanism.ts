/**
 * The failure-mechanism question `pnpm explain` asks before it explains
 * (an exercise manifest's `mechanism`): the choices in a fixed shuffled
 * order, and the asking.
 */
import select from '@inquirer/select';
import type { Manifest } from './manifest.ts';
import { UsageError } from './user-error.ts';

/** An exercise's mechanism question. */
export type Mechanism = NonNullable<Manifest['mechanism']>;

/**
 * The order the choices are shown in: a shuffle fixed per exercise (so the
 * right answer is not always the first, and `--answer N` means the same
 * thing every time), as indices into `m.choices`.
 */
export function shownOrder(id: string, m: Mechanism): number[] {
  const order = m.choices.map((_, i) => i);
  let h = 2166136261;
  for (const ch of id) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  for (let i = order.length - 1; i > 0; i--) {
    h = Math.imul(h ^ (h >>> 15), 2246822507) >>> 0;
    const j = h % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** The student's choice (an index into `m.choices`), asked in the terminal, or from --answer; null when it cannot be asked. */
export async function askMechanism(m: Mechanism, order: number[], given: string | undefined): Promise<number | null> {
  if (given !== undefined) {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1 || n > m.choices.length) throw new UsageError(`--answer must be a choice from 1 to ${m.choices.length}, got ${given}`);
    return order[n - 1]!;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) return null;
  return select({ message: m.question, choices: order.map((c, i) => ({ name: `${i + 1}. ${m.choices[c]}`, value: c })) });
}

