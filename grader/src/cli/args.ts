/**
 * A small command-line parser: positional arguments and `--flag value` /
 * `--flag=value` options, with errors that name the unknown option.
 */

/** Parsed arguments. */
export interface Parsed {
  positional: string[];
  options: Record<string, string | true>;
}

import { UsageError, UserError } from '../user-error.ts';
import { printable } from '../text.ts';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export { UsageError };

/** Parses `argv`; `valued` options take a value, `flags` do not. */
export function parseArgs(argv: string[], valued: readonly string[], flags: readonly string[] = [], usage = ''): Parsed {
  const out: Parsed = { positional: [], options: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--')) {
      out.positional.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (flags.includes(name)) {
      out.options[name] = true;
    } else if (valued.includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`--${name} needs a value${usage ? `\n${usage}` : ''}`);
      out.options[name] = v;
    } else {
      throw new UsageError(`unknown option --${name}${usage ? `\n${usage}` : ''}`);
    }
  }
  return out;
}

/**
 * tsx keeps the code it compiles (the course's, hidden checks and solutions
 * included, when a command loads them) in `<tmp>/tsx-<uid>/`, which it makes
 * readable by everyone: on a machine a class shares, that would hand out the
 * hidden checks. The folder is made private to its owner.
 */
function privateTsxCache(): void {
  try {
    const dir = join(tmpdir(), `tsx-${process.getuid?.() ?? ''}`);
    if (existsSync(dir) && statSync(dir).uid === process.getuid?.()) chmodSync(dir, 0o700);
  } catch {
    // not ours, or not there: nothing to do
  }
}

/** Runs `main`, printing usage and grading errors readably, and exits with its code. */
export async function runCli(main: () => Promise<number>): Promise<void> {
  privateTsxCache();
  try {
    process.exitCode = await main();
  } catch (e) {
    if (e instanceof UserError) {
      // A message may quote names from submissions (a student's folder): shown, not obeyed.
      console.error(printable(e.message, true));
      process.exitCode = e.exitCode;
    } else {
      console.error(`error: ${(e as Error)?.stack ?? String(e)}`);
      process.exitCode = 2;
    }
  }
}
