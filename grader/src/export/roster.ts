/**
 * Rosters: the CSV a TA downloads from a learning-management system (a
 * Canvas gradebook export, a Moodle grade export), read as untrusted input.
 *
 * Its size is bounded before a byte is parsed; an encoding or a separator a
 * spreadsheet chose (UTF-16, Windows-1252, semicolons, tabs) is refused with
 * the line and what was expected, since a guess would silently mangle names
 * or columns; the fields themselves are parsed by csv-parse. A UTF-8 byte
 * order mark, which Canvas writes, is accepted and written back. Every row is
 * kept, in order, with the line it started on, so that the exporters can name
 * it and can prove that nothing was lost or reordered.
 */
import { readFileSync, statSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { UserError } from '../user-error.ts';
import { printable } from '../text.ts';
import { firstInvalidUtf8 } from './utf8.ts';

/** How much of a roster is read at all: far above any class, far below what would hurt. */
export const ROSTER_LIMITS = Object.freeze({
  /** Bytes of the whole file. */
  bytes: 16 * 1024 * 1024,
  /** Lines (header included). */
  lines: 100_000,
  /** Columns of a row. */
  columns: 2_000,
  /** Characters of one field. */
  field: 10_000,
});

/** A roster that cannot be used as it is: names the file, the line (null: the whole file), what was expected and what was found. */
export class RosterError extends UserError {
  override name = 'RosterError';
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly expected: string,
    readonly found: string,
    readonly next: string,
  ) {
    super(`${printable(file)}${line !== null ? `, line ${line}` : ''}: ${found}; expected ${expected}. ${next}`);
  }
}

/** One row of a roster after its header. */
export interface RosterRow {
  /** The line of the file it starts on (the header is line 1). */
  line: number;
  cells: string[];
}

/** A parsed roster. */
export interface Roster {
  file: string;
  header: string[];
  rows: RosterRow[];
  /** The file began with a UTF-8 byte order mark (written back). */
  bom: boolean;
  /** The line ending of its records (written back). */
  eol: '\n' | '\r\n';
}

const SAVE_AS = "Export it again from the learning-management system, or save it from the spreadsheet as 'CSV UTF-8 (comma delimited)'";

/** Reads and parses the roster at `file` (see the module comment); throws RosterError. */
export function readRoster(file: string): Roster {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new RosterError(file, null, 'a CSV file', 'there is no such file', 'Check the path');
  }
  if (size > ROSTER_LIMITS.bytes) throw new RosterError(file, null, `at most ${ROSTER_LIMITS.bytes / 1024 / 1024} MiB`, `the file has ${(size / 1024 / 1024).toFixed(1)} MiB`, 'Is it the roster? A class of thousands fits in a few MiB');
  return parseRoster(readFileSync(file), file);
}

/** Parses roster bytes; `file` names it in errors. */
export function parseRoster(bytes: Uint8Array, file: string): Roster {
  if (bytes.length > ROSTER_LIMITS.bytes) throw new RosterError(file, null, `at most ${ROSTER_LIMITS.bytes / 1024 / 1024} MiB`, `the file has ${(bytes.length / 1024 / 1024).toFixed(1)} MiB`, 'Is it the roster?');
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || bytes.subarray(0, 64).includes(0)) {
    throw new RosterError(file, 1, 'UTF-8 text', 'the file is UTF-16 (a spreadsheet\'s "Unicode text")', SAVE_AS);
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  const bad = firstInvalidUtf8(body);
  if (bad !== null) {
    const line = 1 + countByte(body.subarray(0, bad), 0x0a);
    const start = body.lastIndexOf(0x0a, bad - 1) + 1;
    throw new RosterError(file, line, 'UTF-8 text', `byte 0x${body[bad]!.toString(16).toUpperCase().padStart(2, '0')} at character ${bad - start + 1} is not UTF-8 (a spreadsheet's Windows or Latin-1 encoding, likely in a name with an accent)`, SAVE_AS);
  }
  const text = new TextDecoder('utf-8').decode(body);
  if (text.trim() === '') throw new RosterError(file, 1, 'a header line naming the columns', 'the file is empty', SAVE_AS);
  const lines = countChar(text, '\n') + 1;
  if (lines > ROSTER_LIMITS.lines) throw new RosterError(file, null, `at most ${ROSTER_LIMITS.lines} lines`, `the file has ${lines}`, 'Is it the roster?');
  checkSeparator(file, text);
  const records = parseRecords(file, text);
  const [head, ...rest] = records;
  const header = head!.cells;
  checkHeader(file, header);
  return { file, header, rows: rest, bom, eol: /\r\n/.test(text.slice(0, text.indexOf('\n') + 1)) ? '\r\n' : '\n' };
}

/** Refuses a header line whose fields a spreadsheet separated with ';' or tabs (the fields could not be told apart). */
function checkSeparator(file: string, text: string): void {
  const first = text.slice(0, text.search(/\r?\n|$/));
  const outside = first.replace(/"(?:[^"]|"")*"/g, '');
  const count = (c: string) => countChar(outside, c);
  if (count(',') > 0) return;
  for (const [c, name] of [[';', "';'"], ['\t', 'tabs']] as const) {
    if (count(c) > 0) throw new RosterError(file, 1, "fields separated by ','", `the fields are separated by ${name} (a spreadsheet set to a language that writes decimal commas saves CSV so)`, SAVE_AS);
  }
}

/** The records of `text` with the line each starts on; csv-parse's errors become RosterErrors. */
function parseRecords(file: string, text: string): RosterRow[] {
  let parsed: { record: string[]; info: { bytes: number } }[];
  try {
    parsed = parse(text, { info: true, bom: false, skip_empty_lines: true, relax_column_count: false, max_record_size: ROSTER_LIMITS.field * ROSTER_LIMITS.columns }) as unknown as typeof parsed;
  } catch (e) {
    throw csvProblem(file, e, text);
  }
  // A record starts where the one before it ended (info.bytes, past its line end), after any empty lines;
  // csv-parse's own line count is not used: it counts a CRLF inside a quoted field as two lines.
  const buf = Buffer.from(text, 'utf8');
  let end = 0;
  let line = 1;
  return parsed.map(({ record, info }) => {
    let start = end;
    while (buf[start] === 0x0d || buf[start] === 0x0a) start++;
    line += countByte(buf.subarray(end, start), 0x0a);
    const here = line;
    line += countByte(buf.subarray(start, info.bytes), 0x0a);
    end = info.bytes;
    return checkedRow(file, here, record);
  });
}

function checkedRow(file: string, line: number, record: string[]): RosterRow {
    if (record.length > ROSTER_LIMITS.columns) throw new RosterError(file, line, `at most ${ROSTER_LIMITS.columns} columns`, `the row has ${record.length}`, 'Is it the roster?');
    const long = record.findIndex((c) => c.length > ROSTER_LIMITS.field);
    if (long >= 0) throw new RosterError(file, line, `fields of at most ${ROSTER_LIMITS.field} characters`, `field ${long + 1} has ${record[long]!.length}`, 'Is a quote left open above it?');
  return { line, cells: record };
}

function csvProblem(file: string, e: unknown, text: string): RosterError | unknown {
  const err = e as { code?: string; bytes?: number; record?: string[]; message?: string };
  if (typeof err?.code !== 'string') return e;
  let line: number | null = null;
  if (typeof err.bytes === 'number') {
    const buf = Buffer.from(text, 'utf8');
    if (Array.isArray(err.record)) {
      // A whole record that is wrong: it ends at `bytes` (its line end included); it starts as many lines up as its fields hold.
      let end = err.bytes;
      if (buf[end - 1] === 0x0a) end--;
      if (buf[end - 1] === 0x0d) end--;
      line = 1 + countByte(buf.subarray(0, end), 0x0a) - err.record.reduce((n, c) => n + countChar(c, '\n'), 0);
    } else {
      // A record that could not be read to its end: `bytes` is where the reading of it began.
      let start = err.bytes;
      while (buf[start] === 0x0d || buf[start] === 0x0a) start++;
      line = 1 + countByte(buf.subarray(0, start), 0x0a);
    }
  }
  switch (err.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
    case 'CSV_RECORD_INCONSISTENT_COLUMNS': {
      const got = Array.isArray(err.record) ? err.record.length : '?';
      return new RosterError(file, line, 'as many fields as the header (line 1) has columns', `the row has ${got} fields`, "A field holding ',' must be in double quotes; is a quote missing, or a cell added outside the table?");
    }
    case 'CSV_QUOTE_NOT_CLOSED':
      return new RosterError(file, line, 'a closing \'"\' for every field that opens with one', 'a quoted field that starts on this line is still open at the end of the file', 'Close its quote (it swallows every line after it)');
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return new RosterError(file, line, 'a \'"\' only around a whole field, and doubled ("") inside one', 'a stray \'"\' inside a field', SAVE_AS);
    case 'CSV_MAX_RECORD_SIZE':
      return new RosterError(file, line, `rows of at most ${ROSTER_LIMITS.field * ROSTER_LIMITS.columns} characters`, 'a row is longer', 'Is a quote left open above it?');
    default:
      return new RosterError(file, line, 'a CSV file', `it cannot be read (${err.code}: ${err.message ?? ''})`, SAVE_AS);
  }
}

function checkHeader(file: string, header: readonly string[]): void {
  const seen = new Map<string, number>();
  header.forEach((raw, i) => {
    const name = raw.trim();
    if (name === '') throw new RosterError(file, 1, 'a name for every column', `column ${i + 1} has none`, 'Remove the empty column, or name it');
    const before = seen.get(name);
    if (before !== undefined) throw new RosterError(file, 1, 'each column name once', `'${name}' names columns ${before + 1} and ${i + 1}`, 'Rename or remove one of them');
    seen.set(name, i);
  });
}

/** The index of column `name` (compared without surrounding spaces), or -1. */
export function columnIndex(roster: Roster, name: string): number {
  return roster.header.findIndex((h) => h.trim() === name.trim());
}

/** Throws RosterError naming every column of `required` that the header lacks. */
export function requireColumns(roster: Roster, required: readonly string[], what: string): void {
  const missing = required.filter((c) => columnIndex(roster, c) < 0);
  if (missing.length) {
    throw new RosterError(roster.file, 1, `${what}'s columns ${required.map((c) => `'${c}'`).join(', ')}`, `${missing.map((c) => `'${c}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing (the header has ${roster.header.map((h) => `'${h}'`).join(', ')})`, `Use the file ${what} exports as it is, with its header line first`);
  }
}

/** CSV text of `records` (header first) with the roster's line ending and byte order mark. */
export function csvText(records: readonly (readonly string[])[], like: Pick<Roster, 'bom' | 'eol'>): string {
  return stringify(records as string[][], { bom: like.bom, record_delimiter: like.eol === '\r\n' ? 'windows' : 'unix' });
}

/**
 * Checks that `text` parses back to exactly `records`: what the exporters
 * write, validated before it is written (a quoting bug would shift columns).
 */
export function assertCsvRoundTrip(text: string, records: readonly (readonly string[])[]): void {
  const back = parse(text.replace(/^\ufeff/, ''), { bom: false, relax_column_count: false }) as string[][];
  const same = back.length === records.length && back.every((r, i) => r.length === records[i]!.length && r.every((c, j) => c === records[i]![j]));
  if (!same) throw new Error('BUG: the CSV written does not read back as the records it was made from');
}

function countChar(s: string, c: string): number {
  let n = 0;
  for (let i = s.indexOf(c); i >= 0; i = s.indexOf(c, i + 1)) n++;
  return n;
}

function countByte(b: Uint8Array, v: number): number {
  let n = 0;
  for (const x of b) if (x === v) n++;
  return n;
}
