/**
 * Rosters are untrusted input: what a spreadsheet or an LMS can make of a
 * CSV is either read exactly (a byte order mark, CRLF, quoted commas and
 * newlines) or refused with the line and what was expected (UTF-16, a
 * Windows encoding, semicolons, a broken row, an unclosed quote, a file too
 * big), never guessed at.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRoster, readRoster, requireColumns, RosterError, ROSTER_LIMITS } from '../src/export/roster.ts';
import { firstInvalidUtf8 } from '../src/export/utf8.ts';

const tmp = mkdtempSync(join(tmpdir(), 'dtlab-roster-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const utf8 = (s: string) => new TextEncoder().encode(s);
/** The RosterError that parsing `bytes` throws. */
function refusal(bytes: Uint8Array | string): RosterError {
  try {
    parseRoster(typeof bytes === 'string' ? utf8(bytes) : bytes, 'roster.csv');
  } catch (e) {
    if (e instanceof RosterError) return e;
    throw e;
  }
  throw new Error('the roster was accepted');
}

describe('reading a roster', () => {
  it('keeps a byte order mark, CRLF line ends, quoted commas and a name with a line break, each row with its first line', () => {
    const text = '\ufeffStudent,ID,Section\r\n"Doe, Jane",101,A\r\n"Two\r\nLines",102,B\r\nÉlodie Ñúñez,103,"A, B"\r\n';
    const r = parseRoster(utf8(text), 'roster.csv');
    expect(r.bom).toBe(true);
    expect(r.eol).toBe('\r\n');
    expect(r.header).toEqual(['Student', 'ID', 'Section']);
    expect(r.rows).toEqual([
      { line: 2, cells: ['Doe, Jane', '101', 'A'] },
      { line: 3, cells: ['Two\r\nLines', '102', 'B'] },
      { line: 5, cells: ['Élodie Ñúñez', '103', 'A, B'] },
    ]);
  });

  it('refuses UTF-16, with or without a byte order mark, naming what to save it as', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Student,ID\n', 'utf16le')]);
    for (const bytes of [le, Buffer.from('Student,ID\n', 'utf16le')]) {
      const e = refusal(bytes);
      expect(e.line).toBe(1);
      expect(e.message).toMatch(/UTF-16.*expected UTF-8 text.*CSV UTF-8/);
    }
  });

  it('refuses a Windows or Latin-1 encoded name, naming its line, byte and character', () => {
    const bytes = Buffer.concat([Buffer.from('Student,ID\nAnn,1\nRen'), Buffer.from([0xe9]), Buffer.from('e,2\n')]);
    const e = refusal(bytes);
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/line 3: byte 0xE9 at character 4 is not UTF-8/);
  });

  it("refuses fields separated by semicolons or tabs on line 1, expecting ','", () => {
    expect(refusal('Student;ID;Section\nAnn;1;A\n').message).toMatch(/line 1: the fields are separated by ';'.*expected fields separated by ','/);
    expect(refusal('Student\tID\nAnn\t1\n').message).toMatch(/line 1: the fields are separated by tabs/);
    // A semicolon inside a quoted name of a comma-separated file is just text.
    expect(parseRoster(utf8('Student,ID\n"A; B",1\n'), 'r.csv').rows[0]!.cells).toEqual(['A; B', '1']);
  });

  it('names the row whose field count differs from the header, and an unclosed quote', () => {
    const e = refusal('Student,ID,Section\nAnn,1,A\nBob,2\nCy,3,C\n');
    expect([e.line, e.found]).toEqual([3, 'the row has 2 fields']);
    expect(e.expected).toBe('as many fields as the header (line 1) has columns');
    // After a quoted field spanning a CRLF, and an empty line, the bad row is still named by its own line.
    expect(refusal('Student,ID\r\n"Two\r\nLines",1\r\n\r\nBob\r\n').line).toBe(5);
    const open = refusal('Student,ID\nAnn,1\n"Bob,2\nCy,3\n');
    expect([open.line, open.found]).toEqual([3, 'a quoted field that starts on this line is still open at the end of the file']);
    expect(refusal('Student,ID\nAn"n,1\n').line).toBe(2);
  });

  it('refuses an empty or repeated column name on line 1', () => {
    expect(refusal('Student,ID,ID\nAnn,1,2\n').message).toMatch(/line 1: 'ID' names columns 2 and 3/);
    expect(refusal('Student,,ID\nAnn,1,2\n').message).toMatch(/line 1: column 2 has none/);
    expect(refusal('').message).toMatch(/the file is empty/);
  });

  it('bounds the file before reading it, and the lines and fields while parsing', () => {
    const big = join(tmp, 'big.csv');
    writeFileSync(big, 'Student,ID\n');
    truncateSync(big, ROSTER_LIMITS.bytes + 1);
    expect(() => readRoster(big)).toThrow(/expected at most 16 MiB/);
    expect(() => readRoster(join(tmp, 'none.csv'))).toThrow(/there is no such file/);
    expect(refusal(`Student,ID\n${'a,1\n'.repeat(ROSTER_LIMITS.lines)}`).message).toMatch(/expected at most 100000 lines/);
    expect(refusal(`Student,ID\n"${'x'.repeat(ROSTER_LIMITS.field + 1)}",1\n`).message).toMatch(/line 2: field 1 has 10001/);
  });

  it('names every missing column of a required set', () => {
    const r = parseRoster(utf8('Student,ID,Section\nAnn,1,A\n'), 'canvas.csv');
    expect(() => requireColumns(r, ['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section'], 'a Canvas gradebook export')).toThrow(
      /line 1: 'SIS User ID', 'SIS Login ID' are missing \(the header has 'Student', 'ID', 'Section'\)/,
    );
  });
});

describe('the UTF-8 check', () => {
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const decodes = (b: Uint8Array) => {
    try {
      fatal.decode(b);
      return true;
    } catch {
      return false;
    }
  };

  it('agrees with a strict UTF-8 decoder on any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), (b) => (firstInvalidUtf8(b) === null) === decodes(b)), { numRuns: 3000 });
  });

  it('accepts the encoding of any string, and points at the first bad byte after it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom(0x80, 0xc0, 0xe9, 0xff), (s, bad) => {
        const ok = utf8(s);
        expect(firstInvalidUtf8(ok)).toBeNull();
        expect(firstInvalidUtf8(Buffer.concat([ok, Buffer.from([bad])]))).toBe(ok.length);
      }),
    );
  });
});
