/**
 * Unpacking a student's zip safely: regular files only, nothing outside the
 * destination, and no more bytes than the cap, whatever the zip declares.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractZip, ZipError } from '../src/batch/unzip.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dtlab-unzip-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function zip(name: string, files: Zippable): string {
  const p = join(root, name);
  writeFileSync(p, zipSync(files));
  return p;
}

describe('extractZip', () => {
  it('unpacks folders and files', async () => {
    const z = zip('alice.zip', { 'alice/ex01/src/a.ts': strToU8('export const a = 1;\n'), 'alice/ex01/src/lib/b.ts': strToU8('export const b = 2;\n'), 'alice/empty/': {} });
    const r = await extractZip(z, join(root, 'out'));
    expect(r.files.sort()).toEqual(['alice/ex01/src/a.ts', 'alice/ex01/src/lib/b.ts']);
    expect(readFileSync(join(root, 'out', 'alice/ex01/src/lib/b.ts'), 'utf8')).toBe('export const b = 2;\n');
  });

  it('refuses a zip with an entry that climbs out of its folder (zip-slip), writing nothing', async () => {
    const z = zip('slip.zip', { 'ex01/src/a.ts': strToU8('ok'), '../../evil.ts': strToU8('pwned') });
    await expect(extractZip(z, join(root, 'out'))).rejects.toThrow(/has an entry that would be written outside its folder/);
    expect(existsSync(join(root, 'out'))).toBe(false);
    expect(existsSync(join(root, '..', 'evil.ts'))).toBe(false);
  });

  it('refuses an entry nested deeper than any submission (its copy would overflow the stack)', async () => {
    const deep = `${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}/a.ts`;
    const z = zip('deep.zip', { 'ex01/src/a.ts': strToU8('ok'), [deep]: strToU8('x') });
    await expect(extractZip(z, join(root, 'out'))).rejects.toThrow(/has an entry 40 folders deep, over the limit of 32/);
  });

  it('refuses absolute paths', async () => {
    const z = zip('abs.zip', { '/tmp/dtlab-abs.ts': strToU8('pwned') });
    await expect(extractZip(z, join(root, 'out'))).rejects.toThrow(ZipError);
    expect(existsSync('/tmp/dtlab-abs.ts')).toBe(false);
  });

  it('skips symbolic links instead of creating them', async () => {
    const link: Zippable = { 'ex01/src/link.ts': [strToU8('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }], 'ex01/src/a.ts': strToU8('ok') };
    const r = await extractZip(zip('link.zip', link), join(root, 'out'));
    expect(r.files).toEqual(['ex01/src/a.ts']);
    expect(r.skipped[0]).toMatch(/ex01\/src\/link\.ts \(a symbolic link/);
    expect(readdirSync(join(root, 'out', 'ex01', 'src'))).toEqual(['a.ts']);
  });

  it('stops a zip bomb at the cap, counting the bytes actually inflated', async () => {
    const z = zip('bomb.zip', { 'zeros.bin': new Uint8Array(20 * 1024 * 1024) });
    expect(readFileSync(z).length).toBeLessThan(100 * 1024);
    await expect(extractZip(z, join(root, 'out'), { maxBytes: 1024 * 1024 })).rejects.toThrow(/unpacks to more than 1048576 bytes \(a zip bomb/);
    expect(existsSync(join(root, 'out'))).toBe(false);
  });

  it('refuses too many entries, and a file that is not a zip', async () => {
    const many: Zippable = {};
    for (let i = 0; i < 50; i++) many[`f${i}.ts`] = strToU8('x');
    await expect(extractZip(zip('many.zip', many), join(root, 'out'), { maxEntries: 10 })).rejects.toThrow(/has 50 entries, over the limit of 10/);
    writeFileSync(join(root, 'fake.zip'), 'not a zip');
    await expect(extractZip(join(root, 'fake.zip'), join(root, 'out2'))).rejects.toThrow(/cannot be read as a zip/);
  });

  it('leaves macOS metadata out', async () => {
    const r = await extractZip(zip('mac.zip', { '__MACOSX/ex01/._a.ts': strToU8('x'), 'ex01/.DS_Store': strToU8('x'), 'ex01/src/a.ts': strToU8('ok') }), join(root, 'out'));
    expect(r.files).toEqual(['ex01/src/a.ts']);
  });
});
