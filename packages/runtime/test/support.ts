/** What the runtime tests share: the two backends and where the rank programs live. */
import { fileURLToPath } from 'node:url';
import type { ProgramRef } from '../src/index.ts';

/** Both backends, for tests that must hold on each. */
export const BACKENDS = ['inline', 'workers'] as const;

/** A rank program in test/programs/<file>.ts, by export name. */
export function program(file: string, name: string): ProgramRef {
  return { module: fileURLToPath(new URL(`./programs/${file}.ts`, import.meta.url)), export: name };
}

/** An example program in examples/<file>.ts. */
export function example(file: string, name = 'main'): ProgramRef {
  return { module: fileURLToPath(new URL(`../examples/${file}.ts`, import.meta.url)), export: name };
}
