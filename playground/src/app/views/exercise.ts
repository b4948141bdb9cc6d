/**
 * The exercise view (`pnpm playground exNN`): runs the exercise's public
 * checks on the student's working tree in a Web Worker, again on every save,
 * and shows each check passing or failing with its message, the first wrong
 * value (rank, index, expected, actual), and the failing run's messages as a
 * timeline. The seed is shown: `pnpm grade exNN --seed S` meets the same
 * inputs. Only the public checks exist here; `pnpm grade` scores.
 */
/// <reference types="vite/client" />
import { timelineSvg } from '@dtlab/grader/timeline';
import type { ExerciseInfo } from '../../server/exercise-plugin.ts';
import type { PageCheckResult, WorkerRequest, WorkerResult } from '../exercise/protocol.ts';
import { el, svgBlock } from '../dom.ts';

let cached: Promise<ExerciseInfo | null> | undefined;

/** The exercise the server serves, or null without one. */
export function exerciseInfo(): Promise<ExerciseInfo | null> {
  cached ??= fetch('/__dtlab/exercise')
    .then((r) => (r.ok ? (r.json() as Promise<ExerciseInfo | null>) : null))
    .catch(() => null);
  return cached;
}

function firstWrong(r: PageCheckResult): string | null {
  const d = r.divergence;
  if (!d || d.index === null) return null;
  return `first wrong value: ${d.rank !== null ? `rank ${d.rank}, ` : ''}${d.label ? `${d.label}, ` : ''}index ${JSON.stringify(d.index)}: expected ${String(d.expected)}, actual ${String(d.actual)}`;
}

/** The exercise view (see the file comment). */
export async function exerciseView(root: HTMLElement): Promise<void> {
  const info = await exerciseInfo();
  if (!info) {
    root.append(el('p', {}, 'No exercise: start the playground with one, ', el('code', {}, 'pnpm playground ex01'), '.'));
    return;
  }
  const params = new URLSearchParams(location.search);
  const seed = params.has('seed') ? Number(params.get('seed')) : Math.floor(Math.random() * 2 ** 31);
  // `?backend=workers`: every launch on a Web Worker per rank, as `pnpm grade` runs ranks on worker threads.
  const backend = params.get('backend') === 'workers' ? 'workers' : 'inline';
  const list = el('div', { id: 'checks' });
  const status = el('p', { id: 'run-status' });
  const summary = el('p', { id: 'summary' });
  let worker: Worker | null = null;
  let runs = 0;

  const row = (id: string) => list.querySelector<HTMLElement>(`[data-check="${CSS.escape(id)}"]`)!;
  const show = (r: PageCheckResult) => {
    const box = row(r.id);
    box.className = `check ${r.status}`;
    box.dataset.status = r.status;
    box.dataset.backends = r.backends.join(' ');
    const title = info.checks.find((c) => c.id === r.id)?.title ?? r.id;
    const wrong = firstWrong(r);
    const timeline = r.status !== 'passed' && r.run && r.run.trace.length > 0
      ? svgBlock(timelineSvg({ worldSize: r.run.worldSize, messages: r.run.trace, endUs: r.run.stats.map((s) => s.vtUs), title: `the failing run: ${r.run.worldSize} ranks, ${r.run.trace.length} messages` }), { class: 'check-timeline' })
      : null;
    const parts: (Node | string | null)[] = [
      el('span', { class: 'status' }, r.status === 'passed' ? 'PASS' : r.status === 'failed' ? 'FAIL' : r.status.toUpperCase()),
      el('strong', {}, r.id),
      ` ${title} · ${r.durationMs} ms${r.backends.includes('workers') ? ' · ranks on Web Workers' : ''}`,
      r.status !== 'passed' ? el('pre', { class: 'message' }, r.message) : null,
      wrong ? el('div', { class: 'divergence' }, wrong) : null,
      timeline,
    ];
    box.replaceChildren(...parts.filter((x): x is Node | string => x !== null));
  };

  const start = (why: string) => {
    worker?.terminate();
    const run = ++runs;
    list.replaceChildren(...info.checks.map((c) => el('div', { class: 'check running', 'data-check': c.id, 'data-status': 'pending' }, el('span', { class: 'status' }, '…'), el('strong', {}, c.id), ` ${c.title}`)));
    status.textContent = `run ${run} (${why}) with seed ${seed}: running ${info.checks.length} public checks, ranks ${backend === 'workers' ? 'each in a Web Worker' : 'inline (a Web Worker per rank for launches on fresh workers)'}…`;
    root.dataset.run = String(run);
    delete root.dataset.done;
    const w = new Worker(new URL('../exercise/check-worker.ts', import.meta.url), { type: 'module' });
    worker = w;
    const results: PageCheckResult[] = [];
    const finish = (text: string) => {
      if (worker !== w) return;
      clearTimeout(limit);
      w.terminate();
      worker = null;
      const passed = results.filter((r) => r.status === 'passed');
      summary.textContent = `${passed.length} of ${info.checks.length} public checks pass (${passed.reduce((a, r) => a + (info.checks.find((c) => c.id === r.id)?.points ?? 0), 0)} of ${info.checks.reduce((a, c) => a + c.points, 0)} public points). ${text}`;
      status.textContent = `run ${run} with seed ${seed}, ranks ${backend === 'workers' ? 'each in a Web Worker' : 'inline'}: done. \`pnpm grade ${info.id} --seed ${seed}\` runs the same inputs and the hidden checks, and scores.`;
      root.dataset.done = String(run);
    };
    // The exercise's own time limit for a whole grading; terminating the worker stops any loop.
    const limit = setTimeout(() => {
      for (const c of info.checks) if (!results.some((r) => r.id === c.id)) show({ id: c.id, status: 'timeout', message: `not finished within the exercise's time limit (${info.timeLimitMs} ms): the run was stopped (an infinite loop, or a deadlock the ranks cannot leave)`, backends: [], durationMs: info.timeLimitMs });
      finish('Stopped at the time limit.');
    }, info.timeLimitMs);
    w.onmessage = (e: MessageEvent<WorkerResult>) => {
      const m = e.data;
      if (m.type === 'done') {
        results.push(m.result);
        show(m.result);
      } else if (m.type === 'finished') finish('');
      else if (m.type === 'fatal') {
        list.prepend(el('p', { class: 'error' }, m.message));
        finish('');
      }
    };
    w.onerror = (e) => {
      list.prepend(el('p', { class: 'error' }, `the check worker failed: ${e.message}`));
      finish('');
    };
    const req: WorkerRequest = { checksModule: info.checksModule, submissionBase: info.submissionBase, manifest: info.manifest, seed, checkIds: info.checks.map((c) => c.id), backend };
    w.postMessage(req);
  };

  root.append(
    el('h2', {}, `${info.id}: ${info.title}`),
    el('p', {}, 'Your working tree\'s ', el('code', {}, `${info.folder}/src/`), ' against the public checks, run in this page on every save. Hidden checks are not here: ', el('code', {}, `pnpm grade ${info.id}`), ' runs them and scores.'),
    status,
    summary,
    list,
  );
  if (import.meta.hot) import.meta.hot.on('dtlab:changed', (d: { file: string }) => start(`${d.file} changed`));
  start('opened');
}
