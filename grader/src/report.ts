/**
 * The terminal report of a grading run: each check with its verdict and
 * points, the first wrong value, the communication, and what to do next.
 * Colours on a terminal, plain text otherwise (and when NO_COLOR is set).
 */
import pc from 'picocolors';
// The formatters alone, not the whole runtime: the grade command starts faster.
import { formatBytes, formatUs } from '@dtlab/runtime/report';
import { NO_HIDDEN_CHECKS_NOTE, type Rubric, type RubricCheck } from './rubric.ts';
import { printable } from './text.ts';
import { describeChanges } from './starter-diff.ts';

export { printable };

/** Colour functions, or identity functions when colour is off. */
export function palette(color: boolean) {
  const id = (s: string) => s;
  return color
    ? { green: pc.green, red: pc.red, yellow: pc.yellow, dim: pc.dim, bold: pc.bold, cyan: pc.cyan }
    : { green: id, red: id, yellow: id, dim: id, bold: id, cyan: id };
}

const LABEL: Record<RubricCheck['status'], string> = { passed: 'PASS', failed: 'FAIL', error: 'ERROR', timeout: 'TIME', skipped: 'SKIP' };

/** The report's lines for `rubric`. */
export function formatReport(r: Rubric, opts: { color: boolean; title?: string; rubricPath?: string; exerciseId?: string; hintsLeft?: number }): string {
  const c = palette(opts.color);
  const lines: string[] = [];
  // Everything below that a submission could have written (messages, names, paths, values) is printable().
  const p = (x: unknown) => printable(String(x));
  lines.push(c.bold(`${p(r.exercise)}${opts.title ? `: ${p(opts.title)}` : ''}`));
  lines.push(c.dim(`submission ${p(r.submission.path)} · seed ${r.seed} (rerun with --seed ${r.seed}) · grader ${p(r.grader.version)}`));
  lines.push('');
  const idWidth = Math.max(...r.checks.map((x) => x.id.length), 6);
  for (const ch of r.checks) {
    const color = ch.status === 'passed' ? c.green : ch.status === 'skipped' ? c.dim : ch.status === 'failed' ? c.red : c.yellow;
    const points = `${ch.score}/${ch.maxScore}`;
    lines.push(`  ${color(LABEL[ch.status].padEnd(5))} ${p(ch.id).padEnd(idWidth)}  ${p(ch.name)}  ${c.dim(`${points} · ${ch.durationMs} ms${ch.visibility === 'hidden' ? ' · hidden' : ''}`)}`);
    if (ch.status !== 'passed' && ch.message) for (const l of ch.message.split('\n').slice(0, 12)) lines.push(`        ${p(l)}`);
    if (ch.divergence && ch.divergence.index !== null) {
      const d = ch.divergence;
      lines.push(c.cyan(`        first wrong value: ${d.rank !== null ? `rank ${d.rank}, ` : ''}${d.label ? `${p(d.label)}, ` : ''}index ${JSON.stringify(d.index)}: expected ${p(d.expected)}, actual ${p(d.actual)}`));
    }
    if (ch.comm && ch.status !== 'skipped') lines.push(c.dim(`        communication: ${ch.comm.messages} message${ch.comm.messages === 1 ? '' : 's'}, ${formatBytes(ch.comm.bytes)}, virtual time ${formatUs(ch.comm.virtualTimeUs)}`));
  }
  lines.push('');
  const hidden = r.checks.filter((x) => x.visibility === 'hidden');
  const notRun = hidden.filter((x) => x.status === 'skipped').length;
  const ran = notRun === 0 ? `hidden checks: ran (${hidden.length})` : `hidden checks: ${hidden.length - notRun} of ${hidden.length} ran (the others were skipped: see above)`;
  lines.push(r.grader.hiddenChecks === 'ran' ? ran : c.yellow('hidden checks: not present (public checks only)'));
  // Notes the line above does not already say (a crash outside any check, output beyond the cap).
  for (const note of (r.notes ?? []).filter((n) => n !== NO_HIDDEN_CHECKS_NOTE)) {
    const [first, ...rest] = note.split('\n');
    lines.push(c.yellow(`note: ${p(first)}`), ...rest.slice(0, 12).map((l) => `      ${p(l)}`));
  }
  // The size of the repair, as feedback: the lab asks for the smallest change to the relevant part.
  if (r.changes) lines.push(c.dim(`your repair: ${p(describeChanges(r.changes))}`));
  const verdict = r.status === 'passed' ? c.green('passed') : r.status === 'failed' ? c.red('failed') : c.yellow('grading error');
  lines.push(c.bold(`score ${r.score}/${r.maxScore} · ${verdict}`) + c.dim(` · ${(r.durationMs / 1000).toFixed(1)} s${opts.rubricPath ? ` · rubric written to ${p(opts.rubricPath)}` : ''}`));
  const id = p(opts.exerciseId ?? r.exercise.slice(0, 4));
  if (r.status === 'passed') lines.push(`All checks passed. \`pnpm explain ${id}\` explains why the tempting idea fails.`);
  else if (r.status === 'error') lines.push('Grading itself failed: this is not your fault. Show this output to a TA.');
  else if (opts.hintsLeft && opts.hintsLeft > 0) lines.push(`Stuck? \`pnpm hint ${id}\` shows the next hint (${opts.hintsLeft} left).`);
  return lines.join('\n');
}
