/**
 * Unpacking a student's .zip (as learning-management systems export them)
 * safely, with yauzl:
 *
 * - zip-slip: an entry whose path is absolute or climbs out with `..` refuses
 *   the whole zip (yauzl rejects such names; every path is checked again
 *   against the destination before anything is written);
 * - symlinks: entries marked as symbolic links are skipped, never created;
 * - zip bombs: at most `maxEntries` entries and `maxBytes` bytes in all,
 *   counted on the bytes actually inflated, not on what the zip declares.
 *
 * Regular files and folders are the only things it creates.
 */
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

/** Caps of one extraction. */
export interface UnzipLimits {
  /** Total bytes written, over every entry. Default 64 MiB. */
  maxBytes: number;
  /** Number of entries. Default 10,000. */
  maxEntries: number;
}

export const DEFAULT_UNZIP_LIMITS: UnzipLimits = { maxBytes: 64 * 1024 * 1024, maxEntries: 10_000 };

/** Folders an entry may sit in, at most. */
const MAX_ENTRY_DEPTH = 32;

/** What was unpacked. */
export interface Unzipped {
  /** Files written, relative to the destination. */
  files: string[];
  bytes: number;
  /** Entries left out, with why (symbolic links, macOS resource forks). */
  skipped: string[];
}

/** A zip that was refused: it is damaged, escapes its folder, or is too big. Nothing of it should be graded. */
export class ZipError extends Error {
  override name = 'ZipError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function isSymlink(e: yauzl.Entry): boolean {
  const madeBy = e.versionMadeBy >> 8; // 3 = Unix, 19 = macOS: the high 16 bits hold st_mode
  return (madeBy === 3 || madeBy === 19) && ((e.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK;
}

/** Counts bytes through a stream and fails past the budget. */
class Budget extends Transform {
  constructor(
    private readonly allow: (n: number) => boolean,
    private readonly onOver: () => Error,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (!this.allow(chunk.length)) done(this.onOver());
    else done(null, chunk);
  }
}

/** Unpacks `zipFile` into `dest` (created); throws ZipError (after removing `dest`) if the zip is refused. */
export async function extractZip(zipFile: string, dest: string, limits: Partial<UnzipLimits> = {}): Promise<Unzipped> {
  const { maxBytes, maxEntries } = { ...DEFAULT_UNZIP_LIMITS, ...limits };
  const root = resolve(dest);
  mkdirSync(root, { recursive: true });
  const out: Unzipped = { files: [], bytes: 0, skipped: [] };
  let zip: yauzl.ZipFile | undefined;
  try {
    try {
      zip = await yauzl.openPromise(zipFile, { validateEntrySizes: true });
    } catch (e) {
      throw new ZipError(zipFile, `cannot be read as a zip: ${(e as Error).message}`);
    }
    if (zip.entryCount > maxEntries) throw new ZipError(zipFile, `has ${zip.entryCount} entries, over the limit of ${maxEntries}`);
    try {
      for await (const entry of zip.eachEntry()) {
        const name = entry.fileName;
        const target = resolve(root, name);
        const rel = relative(root, target);
        // yauzl already refuses absolute names and '..'; this is the last line of defence.
        if (isAbsolute(name) || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new ZipError(zipFile, `has an entry that would be written outside its folder: '${name}'`);
        // A submission is a few folders deep; thousands of levels would only overflow the copying later.
        const depth = rel.split(sep).length - 1;
        if (depth > MAX_ENTRY_DEPTH) throw new ZipError(zipFile, `has an entry ${depth} folders deep, over the limit of ${MAX_ENTRY_DEPTH}: '${name.slice(0, 80)}...'`);
        if (name.startsWith('__MACOSX/') || name.split('/').includes('.DS_Store')) {
          out.skipped.push(`${name} (macOS metadata)`);
          continue;
        }
        if (isSymlink(entry)) {
          out.skipped.push(`${name} (a symbolic link: only regular files are unpacked)`);
          continue;
        }
        if (name.endsWith('/')) {
          mkdirSync(target, { recursive: true });
          continue;
        }
        if (entry.isEncrypted()) throw new ZipError(zipFile, `has an encrypted entry: '${name}'`);
        if (out.bytes + entry.uncompressedSize > maxBytes) throw new ZipError(zipFile, `unpacks to more than ${maxBytes} bytes (a zip bomb, or not a submission)`);
        mkdirSync(dirname(target), { recursive: true });
        const stream = await zip.openReadStreamPromise(entry);
        const budget = new Budget(
          (n) => (out.bytes += n) <= maxBytes,
          () => new ZipError(zipFile, `unpacks to more than ${maxBytes} bytes (a zip bomb, or not a submission)`),
        );
        // 'wx': never follow or overwrite something already there (a second entry of the same name).
        await pipeline(stream, budget, createWriteStream(target, { flags: 'wx' }));
        out.files.push(rel.split(sep).join('/'));
      }
    } catch (e) {
      if (e instanceof ZipError) throw e;
      const msg = (e as Error).message;
      if (/invalid relative path|absolute path|invalid characters in fileName/.test(msg)) throw new ZipError(zipFile, `has an entry that would be written outside its folder (${msg})`);
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ZipError(zipFile, `holds the same file twice (${msg})`);
      throw new ZipError(zipFile, `is damaged: ${msg}`);
    }
    return out;
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  } finally {
    zip?.close();
  }
}
