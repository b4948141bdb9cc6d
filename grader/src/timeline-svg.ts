/**
 * A run drawn as an SVG timeline: a lane per rank along virtual time, boxes
 * for what each rank did (compute, waits, regions), and an arrow per message
 * from its sender when it left to its receiver when it arrived. The HTML
 * report draws a failing check's run with it, and the playground its views.
 *
 * Everything that becomes text in the SVG is escaped (`escapeXml`): labels
 * can come from a submission (a region it named) or a file a user opened.
 * No scripts, no external references: the SVG is self-contained.
 */

/** A message as the timeline draws it (a trace event's fields). */
export interface TimelineMessage {
  src: number;
  dst: number;
  bytes: number;
  vtStartUs: number;
  vtEndUs: number;
}

/** Something a rank did over an interval. */
export interface TimelineSlice {
  rank: number;
  startUs: number;
  endUs: number;
  /** Colour class: 'compute' (an op), 'forward', 'backward', 'wait', 'region', or anything else (grey). */
  kind: string;
  label: string;
}

/** What to draw. */
export interface TimelineInput {
  worldSize: number;
  messages: readonly TimelineMessage[];
  slices?: readonly TimelineSlice[];
  /** Each rank's end, in virtual µs (the lane is drawn to there). */
  endUs?: readonly number[];
  /** A title above the lanes. */
  title?: string;
  width?: number;
}

const COLORS: Record<string, string> = { compute: '#4c78a8', forward: '#4c78a8', backward: '#59a14f', wait: '#e15759', region: '#b07aa1', idle: '#dddddd' };

/** `s` safe inside XML text and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A finite number for an attribute (anything else is 0: the SVG stays well-formed whatever the input). */
function num(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 100) / 100) : '0';
}

/** Microseconds as the axis shows them. */
function us(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(x >= 10_000 ? 1 : 2)} ms` : `${x.toFixed(x >= 100 ? 0 : 1)} µs`;
}

/** The SVG markup of `input`'s timeline (see the file comment). */
export function timelineSvg(input: TimelineInput): string {
  const n = Math.max(1, Math.min(256, Math.floor(input.worldSize) || 1));
  const width = input.width ?? 900;
  const left = 64;
  const right = 40;
  const top = input.title ? 40 : 20;
  const lane = 34;
  const height = top + n * lane + 36;
  const slices = input.slices ?? [];
  const ends = [...(input.endUs ?? []), ...input.messages.map((m) => m.vtEndUs), ...slices.map((s) => s.endUs)].filter(Number.isFinite);
  const tMax = Math.max(1e-9, ...ends);
  const x = (t: number) => left + (Math.max(0, t) / tMax) * (width - left - right);
  const y = (r: number) => top + r * lane + lane / 2;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" class="dtlab-timeline" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`);
  out.push('<defs><marker id="dtlab-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>');
  if (input.title) out.push(`<text x="${left}" y="18" font-size="13" font-weight="bold">${escapeXml(input.title)}</text>`);
  for (let r = 0; r < n; r++) {
    const end = input.endUs?.[r] ?? tMax;
    out.push(`<text x="8" y="${num(y(r) + 4)}">rank ${r}</text>`);
    out.push(`<line class="lane" data-rank="${r}" x1="${left}" y1="${num(y(r))}" x2="${num(x(end))}" y2="${num(y(r))}" stroke="#999" stroke-width="1"/>`);
  }
  for (const s of slices) {
    if (!(s.rank >= 0 && s.rank < n)) continue;
    const w = Math.max(0.5, x(s.endUs) - x(s.startUs));
    const fill = COLORS[s.kind] ?? '#9d9d9d';
    const h = s.kind === 'region' ? lane - 6 : lane - 14;
    const yy = y(s.rank) - h / 2;
    out.push(`<rect class="slice ${escapeXml(s.kind)}" data-rank="${s.rank}" x="${num(x(s.startUs))}" y="${num(yy)}" width="${num(w)}" height="${num(h)}" fill="${fill}" fill-opacity="${s.kind === 'region' ? 0.25 : 0.85}"><title>${escapeXml(`rank ${s.rank}: ${s.label} (${us(s.startUs)} to ${us(s.endUs)})`)}</title></rect>`);
  }
  for (const m of input.messages) {
    if (!(m.src >= 0 && m.src < n && m.dst >= 0 && m.dst < n)) continue;
    out.push(
      `<line class="message" data-src="${m.src}" data-dst="${m.dst}" x1="${num(x(m.vtStartUs))}" y1="${num(y(m.src))}" x2="${num(x(m.vtEndUs))}" y2="${num(y(m.dst))}" stroke="#333" stroke-width="1" marker-end="url(#dtlab-arrow)"><title>${escapeXml(`rank ${m.src} → rank ${m.dst}: ${m.bytes} B, left ${us(m.vtStartUs)}, arrived ${us(m.vtEndUs)}`)}</title></line>`,
    );
  }
  const axisY = top + n * lane + 14;
  out.push(`<line x1="${left}" y1="${axisY}" x2="${width - right}" y2="${axisY}" stroke="#333"/>`);
  for (let k = 0; k <= 4; k++) {
    const t = (tMax * k) / 4;
    out.push(`<text x="${num(x(t))}" y="${axisY + 14}" text-anchor="middle">${escapeXml(us(t))}</text>`);
  }
  out.push(`<text x="${width - right}" y="${axisY - 4}" text-anchor="end" fill="#666">virtual time</text>`);
  out.push('</svg>');
  return out.join('');
}
