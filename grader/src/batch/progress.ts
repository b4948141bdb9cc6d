/**
 * Showing a batch's progress: on a terminal a live bar (cli-progress) with
 * done/total, passed/failed/errored, the ETA and the slowest running
 * submission; anywhere else (CI, output redirected to a file) one plain
 * line per graded pair, and a line every 30 s naming what is still running.
 */
import cliProgress from 'cli-progress';
import type { BatchEvent, PairRef } from './events.ts';
import { printable } from '../report.ts';

/** Listens to a batch's events and shows them. */
export interface ProgressView {
  onEvent(e: BatchEvent): void;
  /** Ends the display (the bar stays on screen, finished). */
  stop(): void;
}

// A student id is a folder name: shown printable() wherever it is printed.
const key = (p: PairRef) => printable(`${p.student}/${p.exercise}`);

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** What every view keeps count of. */
class Tally {
  total = 0;
  done = 0;
  passed = 0;
  failed = 0;
  errored = 0;
  readonly running = new Map<string, number>();

  apply(e: BatchEvent): void {
    if (e.type === 'planned') {
      this.total = e.total;
      this.done = e.done;
    } else if (e.type === 'started') this.running.set(key(e.pair), Date.now());
    else if (e.type === 'graded') {
      this.running.delete(key(e.pair));
      this.done++;
      if (e.rubric.status === 'passed') this.passed++;
      else if (e.rubric.status === 'error') this.errored++;
      else this.failed++;
    }
  }

  /** `carol/ex02 41s`, the pair running longest. */
  slowest(): string {
    let best: [string, number] | null = null;
    for (const [k, t] of this.running) if (!best || t < best[1]) best = [k, t];
    return best ? `${best[0]} ${seconds(Date.now() - best[1])}` : '-';
  }
}

function outcome(e: Extract<BatchEvent, { type: 'graded' }>): string {
  const r = e.rubric;
  const flags = r.flags?.length ? ` [${r.flags.join(', ')}]` : '';
  return `${printable(e.pair.student)} ${e.pair.exercise} ${r.status} ${r.score}/${r.maxScore} ${(r.durationMs / 1000).toFixed(1)}s${flags}`;
}

function plannedLine(e: Extract<BatchEvent, { type: 'planned' }>): string {
  return `grading ${e.students} student${e.students === 1 ? '' : 's'} x ${e.exercises.length} exercise${e.exercises.length === 1 ? '' : 's'} (${e.exercises.join(', ')}; shard ${e.shard}): ${e.total} pair${e.total === 1 ? '' : 's'}, ${e.done} already graded, ${e.toGrade} to grade with ${e.jobs} job${e.jobs === 1 ? '' : 's'}`;
}

/** One line per event: for CI logs and redirected output. */
export class LineProgress implements ProgressView {
  private readonly tally = new Tally();
  private readonly started = Date.now();
  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(
    private readonly write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
    heartbeatMs = 30_000,
  ) {
    this.heartbeat = setInterval(() => {
      if (this.tally.running.size) this.write(`... ${this.tally.done}/${this.tally.total} done after ${seconds(Date.now() - this.started)}; running ${this.tally.running.size}, longest ${this.tally.slowest()}`);
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  onEvent(e: BatchEvent): void {
    this.tally.apply(e);
    if (e.type === 'planned') {
      this.write(plannedLine(e));
      for (const p of e.problems) this.write(`  note: ${printable(p)}`);
    } else if (e.type === 'graded') this.write(`[${this.tally.done}/${this.tally.total}] ${outcome(e)}`);
    else if (e.type === 'stopping') this.write(`stopping: ${printable(e.reason)}`);
  }

  stop(): void {
    clearInterval(this.heartbeat);
  }
}

/** A live bar on a terminal; grading errors are printed above it as they happen. */
export class BarProgress implements ProgressView {
  private readonly tally = new Tally();
  private multi: cliProgress.MultiBar | null = null;
  private bar: cliProgress.SingleBar | null = null;
  private readonly ticker: ReturnType<typeof setInterval>;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.ticker = setInterval(() => this.refresh(), 1000);
    this.ticker.unref();
  }

  private started = Date.now();
  private doneAtStart = 0;

  /** Time left at this run's pace so far ('-' until a first pair is graded: skipped ones took no time). */
  private eta(): string {
    const graded = this.tally.done - this.doneAtStart;
    if (graded <= 0) return '-';
    return seconds(((Date.now() - this.started) / graded) * (this.tally.total - this.tally.done));
  }

  private payload() {
    return { passed: this.tally.passed, failed: this.tally.failed, errored: this.tally.errored, slowest: this.tally.slowest(), remaining: this.eta() };
  }

  private refresh(): void {
    this.bar?.update(this.tally.done, this.payload());
  }

  onEvent(e: BatchEvent): void {
    this.tally.apply(e);
    if (e.type === 'planned') {
      this.started = Date.now();
      this.doneAtStart = e.done;
      this.stream.write(`${plannedLine(e)}\n`);
      for (const p of e.problems) this.stream.write(`  note: ${printable(p)}\n`);
      this.multi = new cliProgress.MultiBar(
        {
          stream: this.stream,
          format: 'grading |{bar}| {value}/{total} | passed {passed} failed {failed} errored {errored} | ETA {remaining} | slowest running: {slowest}',
          hideCursor: true,
          fps: 5,
          autopadding: true,
          forceRedraw: true,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar = this.multi.create(e.total, e.done, this.payload());
    } else if (e.type === 'graded') {
      if (e.rubric.status === 'error') this.multi?.log(`grading error: ${outcome(e)}\n`);
      this.refresh();
    } else if (e.type === 'started') this.refresh();
    else if (e.type === 'stopping') this.multi?.log(`stopping: ${e.reason}\n`);
  }

  stop(): void {
    clearInterval(this.ticker);
    this.refresh();
    this.multi?.stop();
  }
}

/** The bar on a terminal (stderr is a TTY and CI is not set), lines otherwise; `plain` forces lines. */
export function createProgress(opts: { plain?: boolean } = {}): ProgressView {
  const tty = Boolean(process.stderr.isTTY) && !process.env.CI && process.env.TERM !== 'dumb';
  return tty && !opts.plain ? new BarProgress() : new LineProgress();
}
