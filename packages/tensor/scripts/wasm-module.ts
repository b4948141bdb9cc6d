/**
 * Turns the matmul kernel's WebAssembly text (src/kernels/matmul.wat) into
 * the TypeScript module that embeds its bytes (src/kernels/matmul-wasm-bytes.ts).
 *
 * The bytes are embedded as base64 rather than read from a .wasm file at run
 * time, so that the tensor package needs no file system and runs unchanged in
 * a browser. wabt (a pinned devDependency, the reference toolkit's own
 * assembler compiled to JavaScript) does the assembling; it is needed only to
 * rebuild the bytes, never to run them. Used by build-wasm.ts and by the test
 * that checks the committed bytes against the source.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabt from 'wabt';

const kernels = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'kernels');

/** Where the WebAssembly text lives. */
export const WAT_PATH = join(kernels, 'matmul.wat');
/** Where the module embedding its bytes lives. */
export const BYTES_PATH = join(kernels, 'matmul-wasm-bytes.ts');

/**
 * Assembles WebAssembly text into a binary, with the two post-MVP features the
 * kernel uses (128-bit SIMD and bulk memory's `memory.copy`) and no name
 * section, so the bytes depend only on the code.
 */
export async function assemble(wat: string, filename = 'matmul.wat'): Promise<Uint8Array> {
  const toolkit = await wabt();
  const module = toolkit.parseWat(filename, wat, { simd: true, bulk_memory: true });
  try {
    module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/** The text of matmul-wasm-bytes.ts for these bytes: base64 in lines of 100 characters. */
export function bytesModule(bytes: Uint8Array): string {
  const b64 = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 100) lines.push(`  '${b64.slice(i, i + 100)}',`);
  return [
    '/**',
    ' * The matmul kernel as WebAssembly bytes, base64: matmul.wat assembled by',
    ' * `pnpm --filter @dtlab/tensor build:wasm` (scripts/build-wasm.ts). Do not edit by',
    ' * hand: change matmul.wat and rebuild; test/matmul-wasm-bytes.test.ts fails when the',
    ' * two disagree.',
    ' */',
    '',
    `/** ${bytes.length} bytes of WebAssembly, base64-encoded. */`,
    'export const MATMUL_WASM_BASE64 = [',
    ...lines,
    "].join('');",
    '',
  ].join('\n');
}

/** The module text that the current matmul.wat should produce. */
export async function expectedBytesModule(): Promise<string> {
  return bytesModule(await assemble(readFileSync(WAT_PATH, 'utf8')));
}
