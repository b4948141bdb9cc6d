/**
 * The report of `pnpm kit check`: one row per exercise (its static checks,
 * which checks its starter fails, its solution's score, its points, how long
 * it took or whether it came from turbo's cache), then every finding.
 */
import { palette } from '@dtlab/grader/grading';
import type { KitCheckResult, ExerciseReport } from './check.ts';
import { plural, type Finding } from './findings.ts';

const DYNAMIC = new Set(['starter', 'solution', 'points', 'task']);

function starterCell(r: ExerciseReport): string {
  if (!r.starter) return '-';
  if (r.starter.some((s) => s.status === 'passed')) return 'ALREADY SOLVED';
  const failed = [...new Set(r.starter.flatMap((s) => s.notPassed.filter((c) => c.status === 'failed' && c.id !== 'policy').map((c) => c.id)))];
  return failed.length ? `fails ${failed.join(', ')}` : `no check failed (${r.starter.map((s) => s.status).join(', ')})`;
}

function solutionCell(r: ExerciseReport): string {
  if (!r.solution) return '-';
  const short = r.solution.filter((s) => s.score !== s.maxScore || s.status !== 'passed');
  if (!short.length) return `${r.solution[0]!.score}/${r.solution[0]!.maxScore} x${r.solution.length}`;
  return short.map((s) => `${s.score}/${s.maxScore} (seed ${s.seed})`).join(', ');
}

function pointsCell(r: ExerciseReport): string {
  if (!r.points) return '-';
  const { total, sum, graded } = r.points;
  return total === null ? `${sum} (no total)` : total === sum && (graded === null || graded === total) ? String(total) : `${total} != ${graded ?? sum}`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

function findingLines(list: Finding[], color: (s: string) => string): string[] {
  return list.map((f) => {
    const [first, ...rest] = f.message.split('\n');
    return [`  ${color(f.level === 'error' ? 'error' : 'warning')} ${f.exercise ?? 'curriculum'} [${f.check}] ${first}`, ...rest.map((l) => `      ${l}`)].join('\n');
  });
}

/** The summary of a `pnpm kit check` run, and its exit code: 0 when there is no error, 1 otherwise. */
export function formatKitCheck(result: KitCheckResult, color = false): { text: string; exitCode: number } {
  const c = palette(color);
  const seeds = [...new Set([...result.reports.values()].flatMap((r) => r?.seeds ?? []))].sort((a, b) => a - b);
  const rows: string[][] = [['exercise', 'static', `starter (seed${seeds.length === 1 ? '' : 's'} ${seeds.join(', ')})`, 'solution', 'points', 'time', 'result']];
  for (const folder of result.folders) {
    const r = result.reports.get(folder) ?? null;
    const mine = result.findings.filter((f) => f.exercise === folder);
    const errors = mine.filter((f) => f.level === 'error');
    const staticErrors = errors.filter((f) => !DYNAMIC.has(f.check)).length;
    const staticWarnings = mine.filter((f) => f.level === 'warning' && !DYNAMIC.has(f.check)).length;
    const staticCell = staticErrors ? plural(staticErrors, 'error') : staticWarnings ? plural(staticWarnings, 'warning') : 'ok';
    const time = !r ? '-' : Date.parse(r.checkedAt) < result.startedAt ? 'cached' : `${(r.durationMs / 1000).toFixed(1)} s`;
    const verdict = errors.length ? 'FAIL' : 'ok';
    rows.push([folder, staticCell, r ? starterCell(r) : 'no report', r ? solutionCell(r) : '-', r ? pointsCell(r) : '-', time, verdict]);
  }
  const lines = [c.bold('pnpm kit check'), ...table(rows).map((l, i) => (i === 0 ? c.dim(l) : l.endsWith('FAIL') ? c.red(l) : l))];
  const errors = result.findings.filter((f) => f.level === 'error');
  const warnings = result.findings.filter((f) => f.level === 'warning');
  if (errors.length) lines.push('', c.bold(`errors (${errors.length}):`), ...findingLines(errors, c.red));
  if (warnings.length) lines.push('', c.bold(`warnings (${warnings.length}):`), ...findingLines(warnings, c.yellow));
  lines.push('', `kit check: ${plural(result.folders.length, 'exercise')}, ${plural(errors.length, 'error')}, ${plural(warnings.length, 'warning')}${errors.length ? '' : ' · the curriculum is sound'}`);
  return { text: lines.join('\n'), exitCode: errors.length ? 1 : 0 };
}
