/**
 * `pnpm grade exNN --html FILE` (and `grade:batch --html`): a rubric as one
 * self-contained HTML page a TA can attach to feedback. The checks with their
 * verdicts, points, messages and first wrong values, and for each check that
 * did not pass an SVG timeline of its run, rank by rank (timeline-svg.ts).
 *
 * No network: the styles are inline, there is no script, no font, no image
 * to fetch, and a Content-Security-Policy that allows none. Every string a
 * submission could have written (messages, labels, values, the submission's
 * name and path) is escaped for HTML and shown with control and
 * bidirectional characters as escapes (`printable`).
 */
import type { Rubric, RubricCheck } from './rubric.ts';
import { printable } from './text.ts';
import { escapeXml, timelineSvg } from './timeline-svg.ts';

/** Escaped, printable text for the page. */
const t = (x: unknown) => escapeXml(printable(String(x), true));

const STYLE = `body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}
h1{font-size:1.4em}.meta{color:#555}.check{border:1px solid #ddd;border-radius:4px;padding:.6em .9em;margin:.7em 0}
.passed .v{color:#2e7d32}.failed .v,.timeout .v,.error .v{color:#c62828}.skipped .v{color:#777}.v{font-weight:bold;margin-right:.5em}
pre{white-space:pre-wrap;font-size:.9em;margin:.4em 0}.div{font-family:monospace;color:#00695c}.note{color:#8a6d00}
.score{font-size:1.2em;font-weight:bold}svg{max-width:100%;height:auto}`;

const LABEL: Record<RubricCheck['status'], string> = { passed: 'PASS', failed: 'FAIL', error: 'ERROR', timeout: 'TIME', skipped: 'SKIP' };

function checkSection(c: RubricCheck): string {
  const parts = [`<section class="check ${c.status}" data-check="${t(c.id)}"><div><span class="v">${LABEL[c.status]}</span><strong>${t(c.id)}</strong> ${t(c.name)} · ${c.score}/${c.maxScore} · ${c.durationMs} ms${c.visibility === 'hidden' ? ' · hidden' : ''}</div>`];
  if (c.status !== 'passed' && c.message) parts.push(`<pre>${t(c.message)}</pre>`);
  const d = c.divergence;
  if (d && d.index !== null) parts.push(`<div class="div">first wrong value: ${d.rank !== null ? `rank ${d.rank}, ` : ''}${d.label ? `${t(d.label)}, ` : ''}index ${t(JSON.stringify(d.index))}: expected ${t(d.expected)}, actual ${t(d.actual)}</div>`);
  if (c.comm) parts.push(`<div class="meta">communication: ${c.comm.messages} messages, ${c.comm.bytes} B, virtual time ${c.comm.virtualTimeUs.toFixed(1)} µs</div>`);
  if (c.timeline && c.timeline.messages.length > 0) {
    const tl = c.timeline;
    const messages = tl.messages.map(([src, dst, bytes, vtStartUs, vtEndUs]) => ({ src, dst, bytes, vtStartUs, vtEndUs }));
    const title = `the run of ${c.id}: ${tl.worldSize} ranks, ${tl.messages.length + tl.droppedMessages} messages${tl.droppedMessages ? ` (the first ${tl.messages.length} drawn)` : ''}`;
    parts.push(`<figure class="timeline">${timelineSvg({ worldSize: tl.worldSize, messages, endUs: tl.endUs, title })}</figure>`);
  }
  parts.push('</section>');
  return parts.join('\n');
}

/** The HTML page of `rubric` (see the file comment). */
export function htmlReport(r: Rubric, opts: { title?: string } = {}): string {
  const verdict = r.status === 'passed' ? 'passed' : r.status === 'failed' ? 'failed' : 'grading error';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${t(r.exercise)}: ${t(r.submission.id)}</title><style>${STYLE}</style></head>
<body>
<h1>${t(r.exercise)}${opts.title ? `: ${t(opts.title)}` : ''}</h1>
<p class="meta">submission ${t(r.submission.id)} (${t(r.submission.path)}, sha256 ${t(r.submission.sha256.slice(0, 12))}) · seed ${r.seed} · grader ${t(r.grader.version)} · ${t(r.startedAt)}</p>
<p class="score">score ${r.score}/${r.maxScore} · ${verdict}</p>
${(r.notes ?? []).map((n) => `<p class="note">note: ${t(n)}</p>`).join('\n')}
${r.checks.map(checkSection).join('\n')}
<p class="meta">Rerun with <code>pnpm grade ${t(r.exercise.slice(0, 4))} --seed ${r.seed}</code>. Timelines: a lane per rank along virtual time; an arrow per message, from when it left its sender to when it arrived.</p>
</body></html>
`;
}
