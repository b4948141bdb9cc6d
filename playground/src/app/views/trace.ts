/**
 * The trace view: open a trace (a Chrome trace from `dtrun --trace`, or a
 * rubric from `pnpm grade`, whose failing checks carry their run's messages)
 * and draw per-rank timelines of compute and communication, with the
 * messages between them. The file is read in the page; nothing is sent
 * anywhere.
 */
import { timelineSvg } from '@dtlab/grader/timeline';
import { parseTraceFile } from '../../model/trace-file.ts';
import { el, svgBlock } from '../dom.ts';

/** The trace view (see the file comment). */
export function traceView(root: HTMLElement): void {
  const input = el('input', { type: 'file', accept: '.json,application/json', id: 'trace-file' });
  const out = el('div', { id: 'trace-out' });
  const show = (name: string, text: string) => {
    try {
      const parts = parseTraceFile(text);
      out.replaceChildren(...parts.map((p) => svgBlock(timelineSvg({ ...p.timeline, title: `${name}: ${p.title}`, width: 1000 }), { class: 'trace-timeline' })));
      root.dataset.ready = name;
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error' }, `${name}: ${(e as Error).message}`));
    }
  };
  input.addEventListener('change', () => {
    const f = input.files?.[0];
    if (f) void f.text().then((t) => show(f.name, t));
  });
  root.append(
    el('h2', {}, 'Trace: open a run'),
    el('p', {}, 'A file from ', el('code', {}, 'pnpm dtrun -n 4 --device course --trace run.json file.ts'), ' or a rubric from ', el('code', {}, 'pnpm grade'), ' (its failing checks keep their run). Boxes are ops (blue), waits (red) and regions; arrows are messages.'),
    el('div', { class: 'controls' }, input),
    out,
  );
}
