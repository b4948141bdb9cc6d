/**
 * The thread-per-rank semantics suite (semantics/suite.ts) on Node's worker
 * threads: every case as the runtime promises it (verify), and the same
 * digest as the inline backend, the single-thread reference, wherever that
 * can run the case. The playground's browser test runs the same suite on
 * Web Workers in Chromium and compares it with these digests.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { launch } from '../src/index.ts';
import { runSemantics, SEMANTICS_CASES, type Digest } from './semantics/suite.ts';

const MODULE = fileURLToPath(new URL('./semantics/programs.ts', import.meta.url));
let workers: Record<string, Digest>;
let inline: Record<string, Digest>;

beforeAll(async () => {
  workers = await runSemantics(launch, MODULE, 'workers');
  inline = await runSemantics(launch, MODULE, 'inline', (c) => c.inline);
}, 60_000);

describe('the thread-per-rank semantics on worker threads', () => {
  it.each(SEMANTICS_CASES.map((c) => [c.name, c] as const))('%s', (name, c) => {
    c.verify(workers[name]!);
    if (c.inline) {
      c.verify(inline[name]!);
      expect(workers[name]).toEqual(inline[name]);
    }
  });
});
