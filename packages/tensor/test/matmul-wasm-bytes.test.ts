/**
 * The WebAssembly bytes embedded in src/kernels/matmul-wasm-bytes.ts are what
 * src/kernels/matmul.wat assembles to: nobody can change the kernel's text
 * without rebuilding its bytes (`pnpm --filter @dtlab/tensor build:wasm`), or
 * ship bytes that no source in the repository explains.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BYTES_PATH, assemble, bytesModule, expectedBytesModule, WAT_PATH } from '../scripts/wasm-module.ts';
import { matmulWasmBytes } from '../src/kernels/matmul-wasm.ts';

describe('the embedded matmul module', () => {
  it('is exactly what scripts/build-wasm.ts writes from matmul.wat', async () => {
    const committed = readFileSync(BYTES_PATH, 'utf8');
    const expected = await expectedBytesModule();
    expect(committed === expected, 'matmul-wasm-bytes.ts is stale: run `pnpm --filter @dtlab/tensor build:wasm` and commit both files').toBe(true);
  });

  it('decodes to the assembled bytes, which are valid WebAssembly', async () => {
    const fresh = await assemble(readFileSync(WAT_PATH, 'utf8'));
    expect(Buffer.from(matmulWasmBytes()).equals(Buffer.from(fresh))).toBe(true);
    const wasm = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;
    expect(wasm.validate(fresh)).toBe(true);
  });

  it('changes when the source changes (the comparison above can fail)', async () => {
    const wat = readFileSync(WAT_PATH, 'utf8').replace('(i32.const 256)', '(i32.const 255)');
    expect(bytesModule(await assemble(wat))).not.toBe(await expectedBytesModule());
  });
});
