/**
 * The collectives view: a real collective run on N ranks in this page (or
 * on a Web Worker per rank), with a reduce op, step by step. Each rank's
 * buffer is drawn as its chunks, each chunk as N bands, band r coloured when
 * rank r's contribution has reached it; the step's messages are arrows from
 * sender to receiver; for small buffers, a table of the values each rank
 * holds. Beside it: the step counter, bytes sent per rank, and the run's
 * virtual time against the cost model's formula. Everything comes from the
 * run (model/collectives.ts).
 */
import { chunkBounds } from '@dtlab/collectives';
import { COLLECTIVES, MAX_ELEMENTS, REDUCE_OPS, reduces, runCollective, segments, type CollectiveKind, type CollectiveRun, type ViewOp } from '../../model/collectives.ts';
import { el, select, us } from '../dom.ts';
import { RANK_COLORS } from './colors.ts';

const ROW = 46;
/** The largest buffer whose values the view lists element by element. */
const MAX_LISTED = 64;
const LEFT = 150;
const WIDTH = 620;

/** The buffers after `step` (0: before any message) and that step's messages, as SVG markup (numbers only: nothing to escape). */
function drawStep(run: CollectiveRun, step: number): string {
  const n = run.worldSize;
  const masks = step === 0 ? run.initial : run.steps[step - 1]!.masks;
  const scale = WIDTH / run.elements;
  const height = n * ROW + 30;
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" id="buffers" width="${LEFT + WIDTH + 20}" height="${height}" font-family="sans-serif" font-size="11">`];
  out.push('<defs><marker id="arr" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>');
  const bounds = chunkBounds(run.elements, n);
  bounds.forEach((b, c) => out.push(`<text x="${LEFT + ((b.start + b.end) / 2) * scale}" y="12" text-anchor="middle">c${c}</text>`));
  for (let r = 0; r < n; r++) {
    const y0 = 20 + r * ROW;
    out.push(`<text x="70" y="${y0 + 20}" fill="${RANK_COLORS[r]}" font-weight="bold">rank ${r}</text>`);
    for (const s of segments(masks[r]!, n)) {
      const x = LEFT + s.start * scale;
      const w = (s.end - s.start) * scale;
      out.push(`<g class="segment" data-rank="${r}" data-chunk="${s.chunk}" data-start="${s.start}" data-end="${s.end}" data-mask="${s.mask}">`);
      const band = (ROW - 10) / n;
      for (let k = 0; k < n; k++) out.push(`<rect x="${x}" y="${y0 + k * band}" width="${w}" height="${band}" fill="${s.mask & (1 << k) ? RANK_COLORS[k] : '#eeeeee'}"/>`);
      out.push(`<rect x="${x}" y="${y0}" width="${w}" height="${ROW - 10}" fill="none" stroke="#555" stroke-width="0.5"/></g>`);
    }
  }
  // The step's messages: arrows in the left margin, sender row to receiver row.
  const msgs = step === 0 ? [] : run.steps[step - 1]!.messages;
  msgs.forEach((m, i) => {
    const x = 10 + (i % 6) * 9;
    const y1 = 20 + m.src * ROW + (ROW - 10) / 2;
    const y2 = 20 + m.dst * ROW + (ROW - 10) / 2;
    out.push(`<path class="message" data-src="${m.src}" data-dst="${m.dst}" d="M${x + 40},${y1} C${x},${y1} ${x},${y2} ${x + 40},${y2}" fill="none" stroke="${RANK_COLORS[m.src]}" stroke-width="1.5" marker-end="url(#arr)"/>`);
  });
  out.push('</svg>');
  return out.join('');
}

/** A value as the table shows it: float32 values of the view's inputs are short dyadic fractions. */
function shortValue(v: number): string {
  if (Number.isNaN(v)) return '·';
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(5)));
}

/** Each rank's values after `step` (0: the inputs; after the last step: the results the ranks returned), as a table. */
function valuesTable(run: CollectiveRun, step: number): HTMLTableElement {
  const values = step === 0 ? run.initialValues : step === run.steps.length ? run.results : run.steps[step - 1]!.values;
  const head = el('tr', {}, el('th', {}, 'element'), ...Array.from({ length: run.elements }, (_, e) => el('th', {}, e)));
  const rows = values.map((row, r) => el('tr', { 'data-rank': r }, el('th', { style: `color:${RANK_COLORS[r]}` }, `rank ${r}`), ...row.map((v) => el('td', {}, shortValue(v)))));
  return el('table', { class: 'values', id: 'values' }, head, ...rows);
}

function maskRanks(mask: number, n: number): string {
  const rs = Array.from({ length: n }, (_, r) => r).filter((r) => mask & (1 << r));
  return rs.length === n ? 'all ranks' : `ranks {${rs.join(', ')}}`;
}

/** The collectives view (see the file comment). */
export async function collectivesView(root: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.search);
  let kind = (params.get('op') as CollectiveKind) ?? 'allReduce:ring';
  let n = Number(params.get('n') ?? 4);
  let elements = Number(params.get('size') ?? 32);
  let op = (REDUCE_OPS as readonly string[]).includes(params.get('reduce') ?? '') ? (params.get('reduce') as ViewOp) : 'sum';
  let backend: 'inline' | 'workers' = params.get('backend') === 'workers' ? 'workers' : 'inline';
  let run: CollectiveRun | null = null;
  let step = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const stage = el('div', { id: 'stage' });
  const figures = el('dl', { class: 'figures', id: 'figures' });
  const messages = el('ul', { id: 'messages' });
  const counter = el('span', { id: 'step-counter' });
  const error = el('p', { class: 'error', id: 'collective-error' });
  const valuesBox = el('div', { id: 'values-box' });

  const render = () => {
    if (!run) return;
    const total = run.steps.length;
    counter.textContent = `step ${step} of ${total}`;
    stage.innerHTML = drawStep(run, step);
    stage.dataset.step = String(step);
    const last = step === run.steps.length;
    valuesBox.replaceChildren(
      ...(run.elements <= MAX_LISTED
        ? [el('h3', {}, step === 0 ? 'values: each rank\'s input' : last ? 'values: what each rank\'s call returned' : `values each rank holds after step ${step} (${reduces(run.kind) ? `the ${run.op === 'avg' ? 'sum, which avg divides by N at the end,' : run.op} over the contributions held` : 'copies'}; · none)`), valuesTable(run, step)]
        : [el('p', {}, `values are listed for buffers of up to ${MAX_LISTED} elements`)]),
    );
    const upTo = run.steps.slice(0, step).flatMap((s) => s.messages);
    const sent = Array.from({ length: run.worldSize }, (_, r) => upTo.filter((m) => m.src === r).reduce((a, m) => a + m.bytes, 0));
    const vt = step === 0 ? 0 : run.steps[step - 1]!.vtUs;
    figures.replaceChildren(
      el('dt', {}, 'virtual time at this step'),
      el('dd', { id: 'vt-step' }, us(vt)),
      el('dt', {}, 'virtual time of the run'),
      el('dd', { id: 'vt-run' }, us(run.vtUs)),
      el('dt', {}, `cost model: ${run.formula}`),
      el('dd', { id: 'vt-formula' }, `${us(run.estimateUs)} (α = ${run.cost.alphaUs} µs, β = ${run.cost.bytesPerUs} B/µs, S = ${4 * run.elements} B)`),
      el('dt', {}, 'bytes sent so far, per rank'),
      el('dd', { id: 'bytes-so-far' }, sent.map((b, r) => `r${r}: ${b} B`).join(' · ')),
      el('dt', {}, 'bytes sent in the run, per rank'),
      el('dd', { id: 'bytes-run' }, run.bytesSent.map((b, r) => `r${r}: ${b} B`).join(' · ')),
      el('dt', {}, 'results'),
      el('dd', { id: 'result-check' }, run.resultAgrees ? 'every message\'s values and every rank\'s result hold what the steps show' : 'MISMATCH: a value differs from what the steps show'),
      el('dt', {}, 'ranks ran'),
      el('dd', { id: 'ran-on' }, backend === 'workers' ? 'each in a Web Worker' : 'inline, in this page'),
    );
    messages.replaceChildren(
      ...(step === 0 ? [el('li', {}, 'before any message: each rank holds its own input')] : run.steps[step - 1]!.messages.map((m) => {
        const ps = m.positions;
        const range = ps.length ? `elements ${Math.min(...ps)}..${Math.max(...ps)}` : 'no elements';
        return el('li', { class: 'message-row', 'data-src': m.src, 'data-dst': m.dst, 'data-bytes': m.bytes, 'data-start': m.vtStartUs, 'data-end': m.vtEndUs }, `rank ${m.src} → rank ${m.dst}: ${m.count} float32 (${m.bytes} B), ${range}, holding ${maskRanks(m.masks[0] ?? 0, run!.worldSize)}; left ${us(m.vtStartUs)}, arrived ${us(m.vtEndUs)}`);
      })),
    );
  };

  const rerun = async () => {
    if (timer) clearInterval(timer);
    timer = undefined;
    error.textContent = '';
    try {
      delete root.dataset.ready;
      // allGather and broadcast copy: no op to choose.
      reduceSelect.querySelector('select')!.disabled = !reduces(kind);
      run = await runCollective(kind, n, elements, { op, backend });
      step = 0;
      root.dataset.ready = `${kind}:${n}:${elements}`;
      root.dataset.op = run.op;
      root.dataset.backend = backend;
      render();
    } catch (e) {
      error.textContent = String((e as Error).message);
    }
  };
  const go = (k: number) => {
    if (!run) return;
    step = Math.max(0, Math.min(run.steps.length, k));
    render();
  };

  const size = el('input', { type: 'number', min: 1, max: MAX_ELEMENTS, value: elements, id: 'size' });
  size.addEventListener('change', () => {
    elements = Math.max(1, Math.min(MAX_ELEMENTS, Math.floor(Number(size.value)) || 1));
    void rerun();
  });
  const button = (label: string, id: string, fn: () => void) => {
    const b = el('button', { id }, label);
    b.addEventListener('click', fn);
    return b;
  };
  const reduceSelect = select('reduce', REDUCE_OPS, op, (v) => ((op = v as ViewOp), void rerun()), 'reduce');
  const legend = el('p', { class: 'legend' }, 'band r of a chunk is coloured once rank r\'s contribution to it has reached that rank: ', ...Array.from({ length: 8 }, (_, r) => el('span', { style: `background:${RANK_COLORS[r]}` }, `rank ${r}`)));
  root.append(
    el('h2', {}, 'Collectives: watch the chunks move'),
    el(
      'div',
      { class: 'controls' },
      select('op', COLLECTIVES, kind, (v) => ((kind = v as CollectiveKind), void rerun()), 'op'),
      reduceSelect,
      select('ranks N', [2, 3, 4, 5, 6, 7, 8], n, (v) => ((n = Number(v)), void rerun()), 'ranks'),
      select('run ranks', ['inline', 'workers'], backend, (v) => ((backend = v as 'inline' | 'workers'), void rerun()), 'backend'),
      el('label', {}, 'elements', size),
      button('◀ back', 'back', () => go(step - 1)),
      button('step ▶', 'next', () => go(step + 1)),
      button('play', 'play', () => {
        if (timer) return;
        timer = setInterval(() => (run && step < run.steps.length ? go(step + 1) : (clearInterval(timer), (timer = undefined))), 700);
      }),
      button('reset', 'reset', () => go(0)),
      counter,
    ),
    legend,
    error,
    stage,
    figures,
    messages,
    valuesBox,
  );
  await rerun();
}
