import { describe, expect, it } from 'vitest';
import { launch, LaunchSpecError, type LaunchSpec } from '../src/index.ts';

const noop = async () => undefined;

// Each invalid spec, and the words its error must contain (the field, and what was given).
const cases: [string, unknown, string][] = [
  ['no spec at all', undefined, 'expected a spec object'],
  ['worldSize 0', { worldSize: 0, program: noop }, 'worldSize must be an integer from 1 to 256, got 0'],
  ['worldSize 2.5', { worldSize: 2.5, program: noop }, 'worldSize must be an integer from 1 to 256, got 2.5'],
  ['an unknown backend', { worldSize: 2, backend: 'threads', program: noop }, `backend must be 'inline' or 'workers', got "threads"`],
  ['no program', { worldSize: 2 }, 'program must be a function or { module'],
  ['a program object without module', { worldSize: 2, program: { export: 'main' } }, 'program must be a function or { module'],
  ['the workers backend given a function', { worldSize: 2, backend: 'workers', program: noop }, 'the workers backend runs each rank in its own thread and cannot take a function'],
  ['a negative timeoutMs', { worldSize: 2, program: noop, timeoutMs: -1 }, 'timeoutMs must be a positive number up to 2147483647, got -1'],
  ['a zero commTimeoutMs', { worldSize: 2, program: noop, commTimeoutMs: 0 }, 'commTimeoutMs must be a positive number up to 2147483647, got 0'],
  ['a string memoryLimitMb', { worldSize: 2, program: noop, memoryLimitMb: '64' }, 'memoryLimitMb must be a positive number up to 2147483647, got "64"'],
  ['pollUs in milliseconds by mistake', { worldSize: 2, program: noop, pollUs: 5000 }, 'pollUs must be a number of microseconds from 0 (no polling) to 1000, got 5000'],
  ['a negative pollUs', { worldSize: 2, program: noop, pollUs: -1 }, 'pollUs must be a number of microseconds from 0 (no polling) to 1000, got -1'],
  ['an infinite timeoutMs (setTimeout would fire at once)', { worldSize: 2, program: noop, timeoutMs: Infinity }, 'timeoutMs must be a positive number up to 2147483647, got Infinity'],
  ['a fractional seed', { worldSize: 2, program: noop, seed: 0.5 }, 'seed must be an integer, got 0.5'],
  ['an unknown output mode', { worldSize: 2, program: noop, output: 'silent' }, `output must be 'prefix', 'inherit', 'capture' or 'ignore', got "silent"`],
  ['a zero bandwidth', { worldSize: 2, program: noop, cost: { alphaUs: 1, bytesPerUs: 0 } }, 'cost needs alphaUs >= 0 and bytesPerUs > 0'],
  ['args not an array', { worldSize: 2, program: noop, args: 3 }, 'args must be an array'],
  ['faults not an array', { worldSize: 2, program: noop, faults: { kind: 'crash', rank: 0, atOp: 1 } }, 'faults must be an array'],
  ['a crash fault on a missing rank', { worldSize: 2, program: noop, faults: [{ kind: 'crash', rank: 2, atOp: 1 }] }, 'crash fault needs a rank in [0, 2) and atOp >= 1'],
  ['a crash fault at op 0', { worldSize: 2, program: noop, faults: [{ kind: 'crash', rank: 0, atOp: 0 }] }, 'crash fault needs a rank in [0, 2) and atOp >= 1'],
  ['a delay fault with negative time', { worldSize: 2, program: noop, faults: [{ kind: 'delay', src: 0, dst: 1, us: -5 }] }, 'delay fault needs src and dst ranks and us >= 0'],
  ['a fractional traceHead', { worldSize: 2, program: noop, traceHead: 2.5 }, 'traceHead must be a whole number of values from 0 to 1024, got 2.5'],
  ['a traceSample over 1024', { worldSize: 2, program: noop, traceSample: 2000 }, 'traceSample must be a whole number of values from 0 to 1024, got 2000'],
  ['an unknown fault kind', { worldSize: 2, program: noop, faults: [{ kind: 'flood' }] }, "unknown fault {\"kind\":\"flood\"}; kinds are 'crash' and 'delay'"],
];

describe('launch refuses an invalid spec with LaunchSpecError naming the field', () => {
  it.each(cases)('%s', async (_label, spec, words) => {
    const err = await launch(spec as LaunchSpec).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(LaunchSpecError);
    expect((err as Error).message).toMatch(/^launch: /);
    expect((err as Error).message).toContain(words);
  });
});
