/**
 * The pipeline view: a model cut into p stages trained on m micro-batches
 * under GPipe or 1F1B, run in this page on the virtual device. A timeline
 * per stage (its forward and backward regions, as the device recorded them),
 * the bubble fraction the device measured against (p-1)/(m+p-1), and the
 * peak number of live activations against the schedule's formula.
 */
import { timelineSvg } from '@dtlab/grader/timeline';
import { runPipeline, type PipelineRun, type Schedule } from '../../model/pipeline.ts';
import { el, select, svgBlock, us } from '../dom.ts';

/** The pipeline view (see the file comment). */
export async function pipelineView(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  let schedule = (params.get('schedule') as Schedule) ?? '1f1b';
  let p = Number(params.get('p') ?? 4);
  let m = Number(params.get('m') ?? 8);
  const out = el('div', { id: 'pipeline-out' });
  const error = el('p', { class: 'error' });

  const draw = (run: PipelineRun) => {
    const slices = run.stages.flatMap((s) => s.slices.map((x) => ({ rank: s.stage, ...x })));
    const svg = timelineSvg({ worldSize: run.p, slices, messages: [], endUs: run.stages.map((s) => s.vtUs), title: `${run.schedule === 'gpipe' ? 'GPipe' : '1F1B'}: ${run.p} stages, ${run.m} micro-batches (blue forward, green backward, gaps idle)`, width: 960 });
    const rows = run.stages.map((s) =>
      el('tr', { 'data-stage': s.stage }, el('td', {}, `stage ${s.stage}`), el('td', {}, us(s.vtUs)), el('td', {}, us(s.computeUs)), el('td', {}, us(s.idleUs)), el('td', { class: 'stage-bubble' }, s.bubble.toFixed(4)), el('td', { class: 'peak' }, s.peakActivations), el('td', {}, s.peakFormula)),
    );
    out.replaceChildren(
      svgBlock(svg, { id: 'pipeline-timeline' }),
      el(
        'dl',
        { class: 'figures' },
        el('dt', {}, 'bubble fraction (device: Σ idle / Σ virtual time)'),
        el('dd', { id: 'bubble' }, run.bubble.toFixed(4)),
        el('dt', {}, 'formula (p-1)/(m+p-1)'),
        el('dd', { id: 'bubble-formula' }, run.bubbleFormula.toFixed(4)),
        el('dt', {}, 'peak live activations (stage 0)'),
        el('dd', { id: 'peak' }, `${run.stages[0]!.peakActivations} (formula: ${run.schedule === 'gpipe' ? 'm' : 'min(p - s, m)'} = ${run.stages[0]!.peakFormula})`),
      ),
      el('table', { class: 'stages' }, el('tr', {}, ...['stage', 'virtual time', 'compute', 'idle', 'bubble', 'peak activations', 'formula'].map((h) => el('th', {}, h))), ...rows),
      el('p', { class: 'note' }, "The network is free here (α = 0), so the bubble is the schedule's alone; the device is 'course' (10 GFLOP/s). A backward is two matmuls and a weight-gradient sum, a forward one matmul."),
    );
  };
  const rerun = async () => {
    error.textContent = '';
    try {
      const run = await runPipeline(schedule, p, m);
      draw(run);
      root.dataset.ready = `${schedule}:${p}:${m}`;
      (window as unknown as { __pipeline?: unknown }).__pipeline = { bubble: run.bubble, stages: run.stages.map((s) => ({ idleUs: s.idleUs, vtUs: s.vtUs, computeUs: s.computeUs, peak: s.peakActivations })) };
    } catch (e) {
      error.textContent = String((e as Error).message);
    }
  };
  root.append(
    el('h2', {}, 'Pipeline: watch the bubble'),
    el(
      'div',
      { class: 'controls' },
      select('schedule', ['gpipe', '1f1b'], schedule, (v) => ((schedule = v as Schedule), void rerun()), 'schedule'),
      select('stages p', [2, 3, 4, 5, 6, 7, 8], p, (v) => ((p = Number(v)), void rerun()), 'stages'),
      select('micro-batches m', [1, 2, 4, 6, 8, 12, 16, 24, 32], m, (v) => ((m = Number(v)), void rerun()), 'micro-batches'),
    ),
    error,
    out,
  );
  await rerun();
}
