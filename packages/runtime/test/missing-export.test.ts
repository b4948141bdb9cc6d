/** Rank program modules that cannot run: a missing export, a top-level await. */
import { describe, expect, it } from 'vitest';
import { launch, LaunchSpecError } from '../src/index.ts';
import { program } from './support.ts';

describe('a program module without the named export', () => {
  const ref = program('module-state', 'mian');

  it('is refused by the inline backend with LaunchSpecError naming the module and the export', async () => {
    const err = await launch({ worldSize: 2, program: ref }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(LaunchSpecError);
    expect((err as Error).message).toBe(`launch: ${ref.module} has no exported function 'mian'`);
  });

  it("fails every worker rank with a TypeError naming the export and listing the module's functions", async () => {
    // The launcher never imports rank code under the workers backend, so each rank finds out for itself.
    const r = await launch({ worldSize: 2, backend: 'workers', program: ref, output: 'ignore' });

    for (const o of r.ranks) {
      expect(o.status).toBe('error');
      expect(o.error).toBeInstanceOf(TypeError);
      expect(o.error!.message).toBe(`${ref.module} has no exported function 'mian'; its exported functions are: bumpCounter`);
    }
  });
});

describe('a program module with a top-level await', () => {
  it('fails every worker rank with an error that says why and what to do', async () => {
    const ref = program('top-level-await', 'main');
    const r = await launch({ worldSize: 2, backend: 'workers', program: ref, output: 'ignore' });
    for (const o of r.ranks) {
      expect(o.status).toBe('error');
      expect(o.error!.message).toBe(`${ref.module} (or a module it imports) uses top-level await, which a rank program cannot: the workers backend loads modules as CommonJS. Move the await into the exported function.`);
    }
  });
});
