/**
 * The playground in a real browser: Debian's Chromium (headless, driven by
 * playwright-core through `executablePath`; nothing is downloaded), against
 * references computed here in Node with the Node build of the same packages:
 * - the collectives view's chunk holdings after each step of a 4-rank ring
 *   all-reduce are the ring schedule's (sum inline, prod on Web Workers),
 *   its messages are the trace of an untapped run of the runtime in Node,
 *   and its last values are that run's results;
 * - the pipeline view's bubble fraction is the virtual device's in Node;
 * - the exercise view shows the starter's first wrong value (the one `pnpm
 *   grade --seed` finds), with ranks inline and on a Web Worker each, and
 *   turns to passing when the solution is copied in;
 * - the trace view draws a `dtrun --trace` file;
 * - the HTML report opens with every request blocked and has its timeline;
 * - the runtime's thread-per-rank semantics suite on Web Workers (a page
 *   and a Web Worker as the launching thread) gives the digests of Node's
 *   worker threads;
 * - hidden checks and solutions are refused by the server.
 * Screenshots go to playground/artifacts/ (gitignored; .ci/run lists them at the end of its log).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { launch, chromeTrace, type Comm } from '@dtlab/runtime';
import { allReduce } from '@dtlab/collectives';
import { tensor } from '@dtlab/tensor';
import { startPlayground, type Playground } from '../src/server/server.ts';
import { runPipeline } from '../src/model/pipeline.ts';
import { inputValue } from '../src/model/collectives.ts';
import { runSemantics, SEMANTICS_CASES, type Digest } from '../../packages/runtime/test/semantics/suite.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const ARTIFACTS = join(HERE, '..', 'artifacts');
const CHROMIUM = process.env.DTLAB_CHROMIUM ?? '/usr/bin/chromium';
const EX01 = join(ROOT, 'exercises', 'ex01-allreduce-mean');
const haveBrowser = existsSync(CHROMIUM);
// Under CI a missing browser is a failure (.ci/run installs it), elsewhere the suite says so and skips.
if (!haveBrowser && process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set DTLAB_CHROMIUM)`);

let browser: Browser;
let pg: Playground;
let work: string;

beforeAll(async () => {
  if (!haveBrowser) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  work = mkdtempSync(join(tmpdir(), 'dtlab-playground-'));
  cpSync(join(EX01, 'src'), join(work, 'src'), { recursive: true });
  pg = await startPlayground({ exercise: 'ex01', submissionDir: work, port: 0, quiet: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});

afterAll(async () => {
  await browser?.close();
  await pg?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function open(path: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await page.goto(pg.url + path);
  return page;
}

const mod = (a: number, n: number) => ((a % n) + n) % n;

describe.skipIf(!haveBrowser)('the playground in Chromium', () => {
  const ringInPage = async (op: 'sum' | 'prod', backend: 'inline' | 'workers', screenshot?: string) => {
    const n = 4;
    const size = 30; // chunks of 8, 8, 7, 7
    const page = await open(`?op=allReduce:ring&n=${n}&size=${size}&reduce=${op}&backend=${backend}#collectives`);
    await page.waitForSelector(`#view[data-ready="allReduce:ring:${n}:${size}"][data-op="${op}"][data-backend="${backend}"]`, { timeout: 30_000 });
    // The reference: the same all-reduce, untapped, on Node's runtime; its messages grouped into the ring's rounds.
    const node = await launch({ worldSize: n, program: async (comm: Comm) => (await allReduce(comm, tensor(Array.from({ length: size }, (_, e) => inputValue(comm.rank, e))), { op })).toArray() });
    const rounds = Array.from({ length: 2 * (n - 1) }, (_, s) => node.trace.filter((e) => node.trace.filter((x) => x.src === e.src && x.seq < e.seq).length === s));
    const held = Array.from({ length: n }, (_, r) => Array.from({ length: n }, () => 1 << r));
    for (let s = 0; s < 2 * (n - 1); s++) {
      await page.click('#next');
      await page.waitForSelector(`#stage[data-step="${s + 1}"]`);
      const before = held.map((row) => [...row]);
      for (let r = 0; r < n; r++) {
        if (s < n - 1) held[r]![mod(r - s - 2, n)] = before[mod(r - 1, n)]![mod(r - s - 2, n)]! | (1 << r);
        else held[r]![mod(r - (s - n + 1) - 1, n)] = (1 << n) - 1;
      }
      const shown = await page.$$eval('#stage g.segment', (gs) => gs.map((g) => [Number(g.getAttribute('data-rank')), Number(g.getAttribute('data-chunk')), Number(g.getAttribute('data-mask'))]));
      expect(shown.length, `step ${s + 1}: one segment per chunk`).toBe(n * n);
      for (const [r, c, mask] of shown) expect(mask, `${op}, step ${s + 1}, rank ${r}, chunk ${c}`).toBe(held[r!]![c!]);
      const msgs = await page.$$eval('#messages li.message-row', (ls) => ls.map((l) => ['src', 'dst', 'bytes', 'start', 'end'].map((k) => Number(l.getAttribute(`data-${k}`)))));
      const expected = rounds[s]!.map((e) => [e.src, e.dst, e.bytes, e.vtStartUs, e.vtEndUs]);
      expect(msgs.sort((a, b) => a[0]! - b[0]!)).toEqual(expected.sort((a, b) => a[0]! - b[0]!));
      if (screenshot && s === n - 2) await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
    }
    expect(await page.textContent('#vt-run')).toBe(await page.evaluate((vt) => `${vt.toFixed(2)} µs`, Math.max(...node.stats.map((x) => x.vtUs))));
    expect(await page.textContent('#result-check')).toContain('hold what the steps show');
    // After the last step the table lists what each rank's call returned: Node's values, digit for digit as the page prints them.
    const table = await page.$$eval('#values tr[data-rank]', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(table).toEqual(node.ranks.map((o) => (o.value as number[]).map((v) => String(Number.isInteger(v) ? v : Number(v.toPrecision(5))))));
    expect(await page.textContent('#ran-on')).toBe(backend === 'workers' ? 'each in a Web Worker' : 'inline, in this page');
    await page.close();
  };

  it('collectives: after each step of a 4-rank ring all-reduce the chunks hold what the ring schedule says, and the messages and values are the runtime\'s', async () => {
    await ringInPage('sum', 'inline', 'collectives.png');
  });

  it('collectives: the same with prod on a Web Worker per rank', async () => {
    await ringInPage('prod', 'workers');
  });

  it('pipeline: the bubble fraction the page shows is the virtual device\'s', async () => {
    const page = await open('?schedule=1f1b&p=4&m=8#pipeline');
    await page.waitForSelector('#view[data-ready="1f1b:4:8"]');
    const shown = (await page.evaluate(() => (window as unknown as { __pipeline: { bubble: number; stages: { idleUs: number; vtUs: number; computeUs: number; peak: number }[] } }).__pipeline))!;
    const node = await runPipeline('1f1b', 4, 8);
    expect(shown.stages).toEqual(node.stages.map((s) => ({ idleUs: s.idleUs, vtUs: s.vtUs, computeUs: s.computeUs, peak: s.peakActivations })));
    expect(shown.bubble).toBe(node.bubble);
    expect(await page.textContent('#bubble')).toBe(node.bubble.toFixed(4));
    expect(await page.textContent('#bubble-formula')).toBe((3 / 11).toFixed(4));
    expect(await page.$$eval('#pipeline-timeline rect.slice', (r) => r.length)).toBe(4 * 16);
    await page.screenshot({ path: join(ARTIFACTS, 'pipeline.png'), fullPage: true });
    await page.close();
  });

  it('exercise: shows the starter\'s first wrong value, then passes once the solution is copied in', async () => {
    const seed = 7;
    // The reference: the grader itself, public checks only, same seed.
    const out = join(work, 'rubric.json');
    spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'grader', 'src', 'cli', 'grade.ts'), 'ex01', '--submission', work, '--seed', String(seed), '--no-hidden', '--out', out], { cwd: ROOT, encoding: 'utf8' });
    const rubric = JSON.parse(readFileSync(out, 'utf8')) as { checks: { id: string; status: string; divergence?: { rank: number; index: number; expected: number; actual: number } }[] };
    const sameVerdicts = async (page: Page, how: string) => {
      for (const c of rubric.checks.filter((x) => x.id !== 'policy')) {
        expect(await page.getAttribute(`[data-check="${c.id}"]`, 'data-status'), `${c.id} (${how})`).toBe(c.status);
        if (c.divergence) {
          const d = c.divergence;
          const text = await page.textContent(`[data-check="${c.id}"] .divergence`);
          expect(text).toContain(`rank ${d.rank}`);
          expect(text).toContain(`index ${d.index}: expected ${d.expected}, actual ${d.actual}`);
        }
      }
    };
    // Every launch on a Web Worker per rank, as the grader runs ranks on worker threads: the same verdicts.
    const onWorkers = await open(`?seed=${seed}&backend=workers#exercise`);
    await onWorkers.waitForSelector('#view[data-done="1"]', { timeout: 60_000 });
    expect(await onWorkers.textContent('#run-status')).toContain('each in a Web Worker');
    // Each check ran its launches (at least one) on Web Workers.
    for (const backends of await onWorkers.$$eval('[data-check]', (cs) => cs.map((c) => c.getAttribute('data-backends')!))) expect(backends).toMatch(/^workers( workers)*$/);
    await sameVerdicts(onWorkers, 'ranks on Web Workers');
    await onWorkers.close();
    const page = await open(`?seed=${seed}#exercise`);
    await page.waitForSelector('#view[data-done="1"]', { timeout: 30_000 });
    await sameVerdicts(page, 'inline ranks');
    for (const backends of await page.$$eval('[data-check]', (cs) => cs.map((c) => c.getAttribute('data-backends')!))) expect(backends).toMatch(/^inline( inline)*$/);
    expect(rubric.checks.some((c) => c.status === 'failed')).toBe(true);
    expect(await page.$$eval('[data-status="failed"] svg.dtlab-timeline line.message', (l) => l.length)).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'exercise-failing.png'), fullPage: true });
    cpSync(join(ROOT, 'solutions', 'ex01-allreduce-mean', 'src'), join(work, 'src'), { recursive: true });
    await page.waitForSelector('#view[data-done="2"]', { timeout: 30_000 });
    expect(await page.$$eval('[data-check]', (cs) => cs.map((c) => c.getAttribute('data-status')))).toEqual(['passed', 'passed', 'passed']);
    await page.screenshot({ path: join(ARTIFACTS, 'exercise-passing.png'), fullPage: true });
    await page.close();
  });

  it('runtime: the thread-per-rank semantics suite on Web Workers gives what it gives on Node\'s worker threads', async () => {
    const runtime = join(ROOT, 'packages', 'runtime');
    const programs = join(runtime, 'test', 'semantics', 'programs.ts');
    const node = await runSemantics(launch, programs, 'workers');
    const page = await open('#trace');
    let started = 0;
    page.on('worker', () => started++);
    // A string, not a function: vitest rewrites a test file's import() for Node, and this one must run in the page.
    const fromPage = (await page.evaluate(`(async () => {
      const { launch } = await import('/@fs${runtime}/src/browser.ts');
      const { runSemantics } = await import('/@fs${runtime}/test/semantics/suite.ts');
      return runSemantics(launch, '/@fs${programs}', 'workers');
    })()`)) as Record<string, Digest>;
    // Every rank had a Web Worker of its own (one per rank of every case), and none is left running: each launch terminated its ranks' workers.
    expect(started).toBeGreaterThanOrEqual(SEMANTICS_CASES.reduce((a, c) => a + c.spec('').worldSize, 0));
    await expect.poll(() => page.workers().map((w) => w.url()), { timeout: 5000 }).toEqual([]);
    // The same from a Web Worker as the launching thread (the exercise view's check worker is one): nested workers.
    const fromWorker = (await page.evaluate(`new Promise((resolve, reject) => {
      const base = location.origin + '/@fs${runtime}';
      const code = "const { launch } = await import('" + base + "/src/browser.ts');"
        + "const { runSemantics } = await import('" + base + "/test/semantics/suite.ts');"
        + "postMessage(await runSemantics(launch, '" + base + "/test/semantics/programs.ts', 'workers'));";
      const w = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })), { type: 'module' });
      w.onmessage = (e) => (w.terminate(), resolve(e.data));
      w.onerror = (e) => reject(new Error('the launching worker failed: ' + e.message));
    })`)) as Record<string, Digest>;
    for (const c of SEMANTICS_CASES) {
      c.verify(fromPage[c.name]!);
      expect(fromPage[c.name], c.name).toEqual(node[c.name]);
      c.verify(fromWorker[c.name]!);
      expect(fromWorker[c.name], `${c.name} (launched from a Web Worker)`).toEqual(node[c.name]);
    }
    await page.close();
  });

  it('trace: draws a file written by dtrun --trace, compute, waits and messages per rank', async () => {
    const result = await launch({ worldSize: 3, device: 'course', timeline: true, program: async (comm: Comm) => {
      const x = tensor(Array.from({ length: 4096 }, (_, i) => i)).mul(2);
      await comm.sendRecv((comm.rank + 1) % 3, x, (comm.rank + 2) % 3);
    } });
    const file = join(work, 'run.json');
    writeFileSync(file, JSON.stringify(chromeTrace(result)));
    const page = await open('#trace');
    await page.setInputFiles('#trace-file', file);
    await page.waitForSelector('#view[data-ready="run.json"]');
    expect(await page.$$eval('.trace-timeline line.message', (l) => l.length)).toBe(3);
    expect(await page.$$eval('.trace-timeline rect.slice.compute', (l) => l.length)).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'trace.png'), fullPage: true });
    await page.close();
  });

  it('the HTML report opens with the network blocked and has the timeline', async () => {
    cpSync(join(EX01, 'src'), join(work, 'src'), { recursive: true }); // the starter again
    const html = join(work, 'report.html');
    spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'grader', 'src', 'cli', 'grade.ts'), 'ex01', '--submission', work, '--seed', '7', '--no-hidden', '--out', join(work, 'r2.json'), '--html', html], { cwd: ROOT, encoding: 'utf8' });
    const context = await browser.newContext({ offline: true });
    const requested: string[] = [];
    await context.route('**/*', (route) => {
      requested.push(route.request().url());
      return route.request().url().startsWith('file:') ? route.continue() : route.abort();
    });
    const page = await context.newPage();
    await page.goto(`file://${html}`);
    expect(requested).toEqual([`file://${html}`]);
    expect(await page.textContent('.score')).toContain('failed');
    expect(await page.$$eval('section.failed svg.dtlab-timeline line.message', (l) => l.length)).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, 'html-report.png'), fullPage: true });
    await context.close();
  });

  it('the server refuses the hidden checks and the solutions', async () => {
    for (const path of [join(ROOT, 'grader', 'hidden', 'ex01-allreduce-mean', 'checks.ts'), join(ROOT, 'solutions', 'ex01-allreduce-mean', 'src', 'allreduce-mean.ts')]) {
      const res = await fetch(`${pg.url}@fs${path}`);
      expect(res.status, path).toBe(403);
    }
    const ok = await fetch(`${pg.url}@fs${join(ROOT, 'grader', 'checks', 'ex01-allreduce-mean', 'checks.ts')}`);
    expect(ok.status).toBe(200);
    const info = (await (await fetch(`${pg.url}__dtlab/exercise`)).json()) as { checks: { id: string }[]; manifest: Record<string, unknown> };
    expect(info.checks.map((c) => c.id)).toEqual(['two-ranks', 'three-ranks', 'ranks-agree']);
    expect(JSON.stringify(info)).not.toMatch(/mechanism|hints|seed-experiment|edge-shapes/);
  });
});
