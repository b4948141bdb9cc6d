/**
 * The HTML report: a failing check's run drawn as a timeline (a lane per
 * rank, an arrow per message), everything a submission wrote escaped, no
 * reference to anything outside the page; and the rubric's timeline field is
 * bounded by the schema.
 */
import { describe, expect, it } from 'vitest';
import { htmlReport } from '../src/html-report.ts';
import { validateRubric, type Rubric } from '../src/rubric.ts';
import { runTimeline } from '../src/check-core.ts';

const trace = [
  { seq: 0, src: 0, dst: 1, tag: 0, bytes: 16, count: 4, dtype: 'float32' as const, vtStartUs: 0, vtEndUs: 10.0128 },
  { seq: 1, src: 1, dst: 0, tag: 0, bytes: 16, count: 4, dtype: 'float32' as const, vtStartUs: 0, vtEndUs: 10.0128 },
];
const stats = [0, 1].map((rank) => ({ rank, messagesSent: 1, messagesReceived: 1, bytesSent: 16, bytesReceived: 16, vtUs: 10.0128, unreceived: 0, backgroundWaitUs: 0, backgroundStreams: 0 }));

function rubric(message: string): Rubric {
  return {
    schemaVersion: 1,
    exercise: 'ex01-allreduce-mean',
    submission: { id: '<img src=x onerror=alert(1)>', path: '/tmp/s', sha256: 'a'.repeat(64) },
    grader: { version: '0.1.0+test' },
    seed: 7,
    startedAt: '2026-12-01T00:00:00.000Z',
    durationMs: 5,
    status: 'failed',
    score: 0,
    maxScore: 1,
    checks: [
      {
        id: 'two-ranks',
        name: 'Mean of two ranks',
        visibility: 'public',
        score: 0,
        maxScore: 1,
        status: 'failed',
        message,
        divergence: { rank: 1, index: 0, expected: 1.5, actual: '<b>2</b>', label: 'tensors[0]' },
        timeline: runTimeline({ worldSize: 2, trace, stats }),
        durationMs: 3,
      },
    ],
  };
}

describe('the HTML report', () => {
  it('draws the failing check\'s run: a lane per rank and an arrow per message', () => {
    const html = htmlReport(rubric('wrong values'));
    expect(html.match(/class="lane"/g)).toHaveLength(2);
    expect(html.match(/class="message"/g)).toHaveLength(2);
    expect(html).toContain('first wrong value: rank 1, tensors[0], index 0: expected 1.5, actual &lt;b&gt;2&lt;/b&gt;');
  });

  it('escapes what a submission wrote, and refers to nothing outside the page', () => {
    const html = htmlReport(rubric('</pre><script>fetch("http://x")</script>\u202eevil'));
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;');
    expect(html).toContain('\\u{202e}');
    // No URL but the SVG namespace, no external resource of any kind.
    const urls = html.match(/https?:\/\/[^"\s]*/g)!.filter((u) => u !== 'http://www.w3.org/2000/svg');
    expect(urls).toEqual([expect.stringMatching(/^http:\/\/x&quot;/)]); // the message's own text, escaped
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b|\ssrc="|\shref="|url\((?!#)/);
  });

  it('a rubric keeps at most 2000 messages of a run, and the schema holds it to numbers', () => {
    const many = Array.from({ length: 2500 }, (_, seq) => ({ ...trace[0]!, seq }));
    const tl = runTimeline({ worldSize: 2, trace: many, stats });
    expect(tl.messages).toHaveLength(2000);
    expect(tl.droppedMessages).toBe(500);
    const r = rubric('x');
    r.checks[0]!.timeline = tl;
    expect(() => validateRubric(r)).not.toThrow();
    (r.checks[0]!.timeline!.messages[0] as unknown[])[2] = 'lots';
    expect(() => validateRubric(r)).toThrow(/timeline/);
  });
});
