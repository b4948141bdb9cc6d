/**
 * An experiment module: the fields the CLI walks through are present and
 * consistent. With `run`, the experiment is also run once, and a choice
 * prediction must have exactly one option that the measured rows bear out.
 */
import type { Experiment, Row } from '../experiment.ts';
import type { Chapter } from '../manifest.ts';
import type { Findings } from './findings.ts';

function problems(e: Experiment): string[] {
  const out: string[] = [];
  for (const k of ['title', 'question', 'fixed'] as const) if (typeof e[k] !== 'string' || !e[k].trim()) out.push(`no ${k}`);
  const v = e.control?.values ?? [];
  if (!e.control?.name || !e.control?.key || !e.control?.changes) out.push('the control needs a name, a key and what it changes');
  if (v.length < 2 || v.some((x) => !Number.isFinite(x)) || new Set(v).size !== v.length) out.push('the control needs at least two distinct finite values');
  const keys = new Set((e.columns ?? []).map((c) => c.key));
  if (keys.size === 0) out.push('no columns');
  if (!keys.has(e.control?.key)) out.push(`no column shows the control ('${e.control?.key}')`);
  if (!keys.has(e.chart?.key)) out.push(`the chart plots '${e.chart?.key}', which no column has`);
  const p = e.prediction;
  if (!p?.prompt?.trim()) out.push('the prediction has no prompt');
  if (p?.kind === 'choice') {
    const ids = p.options.map((o) => o.id);
    if (p.options.length < 2) out.push('a choice prediction needs at least two options');
    if (new Set(ids).size !== ids.length) out.push('two prediction options share an id');
    if (p.options.some((o) => !o.text?.trim() || typeof o.holds !== 'function')) out.push('every prediction option needs a text and a holds(rows) test');
  } else if (p?.kind === 'number') {
    if (!p.unit?.trim() || !(p.tolerance?.relative > 0) || typeof p.measured !== 'function' || !p.measuredLabel?.trim()) out.push('a number prediction needs a unit, a relative tolerance above 0, measured(rows) and measuredLabel');
  } else out.push(`the prediction's kind must be 'choice' or 'number'`);
  return out;
}

/** Checks experiment `e` of chapter `c`. */
export async function checkExperiment(e: Experiment, c: Chapter, f: Findings, opts: { run: boolean }): Promise<void> {
  const found = problems(e);
  if (found.length) {
    f.error('experiment', c.number, e.id, `experiment ${e.id}: ${found.join('; ')}`);
    return;
  }
  if (!opts.run) return;
  const rows: Row[] = [];
  for (const value of e.control.values) rows.push(await e.run(value));
  for (const [i, row] of rows.entries()) {
    const missing = e.columns.filter((col) => !Number.isFinite(row[col.key]));
    if (missing.length) f.error('experiment', c.number, e.id, `experiment ${e.id}, ${e.control.name} = ${e.control.values[i]}: no finite value for ${missing.map((m) => m.key).join(', ')}`);
  }
  if (e.prediction.kind === 'choice') {
    const holding = e.prediction.options.filter((o) => o.holds(rows)).map((o) => o.id);
    if (holding.length !== 1) f.error('experiment', c.number, e.id, `experiment ${e.id}: ${holding.length} prediction options hold for the measured rows (${holding.join(', ') || 'none'}); exactly one must`);
  } else if (!Number.isFinite(e.prediction.measured(rows))) {
    f.error('experiment', c.number, e.id, `experiment ${e.id}: measured(rows) is not a finite number`);
  }
  if (!e.summarize(rows).trim()) f.error('experiment', c.number, e.id, `experiment ${e.id}: summarize(rows) is empty`);
}
