/**
 * A rank's stdout and stderr during one launch: prefixed with `[rank r]`
 * line by line, passed through, captured (up to a limit), or dropped.
 *
 * Worker output travels separately from the worker's messages, so when a
 * program ends the worker writes an end marker on both streams; the launch
 * has all of a rank's output once both markers (or the streams' ends) arrive.
 */
import type { Readable } from 'node:stream';
import type { OutputMode } from '../types.ts';

/** How long to wait for a rank's end markers before giving up on late output. */
const FLUSH_LIMIT_MS = 500;

/** Handles one rank's output streams for one launch. */
export class RankOutput {
  private captureBytes = 0;
  private truncated = 0;
  private readonly chunks: string[] = [];
  private readonly ended: Promise<void>[] = [];
  private readonly detachers: (() => void)[] = [];

  constructor(
    private readonly rank: number,
    private readonly mode: OutputMode,
    private readonly limitBytes: number,
    streams: { stdout: Readable; stderr: Readable },
    marker: string,
  ) {
    this.attach(streams.stdout, process.stdout, marker);
    this.attach(streams.stderr, process.stderr, marker);
  }

  private attach(stream: Readable, sink: NodeJS.WriteStream, marker: string): void {
    let partial = '';
    let done = false;
    let finish!: () => void;
    this.ended.push(new Promise<void>((r) => (finish = r)));
    const emit = (text: string) => {
      if (this.mode === 'ignore' || text === '') return;
      if (this.mode === 'inherit') return void sink.write(text);
      if (this.mode === 'capture') return this.capture(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      if (lines.length) sink.write(lines.map((l) => `[rank ${this.rank}] ${l}\n`).join(''));
    };
    const close = () => {
      if (done) return;
      done = true;
      if (this.mode === 'prefix' && partial) sink.write(`[rank ${this.rank}] ${partial}\n`);
      partial = '';
      finish();
    };
    const onData = (text: string) => {
      if (done) return;
      const at = text.indexOf(marker);
      if (at < 0) return emit(text);
      emit(text.slice(0, at));
      close();
    };
    stream.setEncoding('utf8');
    stream.on('data', onData);
    stream.on('end', close);
    this.detachers.push(() => {
      stream.off('data', onData);
      stream.off('end', close);
    });
  }

  private capture(text: string): void {
    const room = this.limitBytes - this.captureBytes;
    if (room <= 0) {
      this.truncated += Buffer.byteLength(text);
      return;
    }
    const piece = Buffer.byteLength(text) <= room ? text : Buffer.from(text).subarray(0, room).toString('utf8');
    this.chunks.push(piece);
    this.captureBytes += Buffer.byteLength(piece);
    this.truncated += Buffer.byteLength(text) - Buffer.byteLength(piece);
  }

  /** Waits until the rank's output is complete (briefly, for a rank that was stopped), then stops listening. */
  async flush(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(this.ended), new Promise((r) => (timer = setTimeout(r, FLUSH_LIMIT_MS)))]);
    clearTimeout(timer);
    for (const d of this.detachers) d();
  }

  /**
   * `{ output }` in capture mode, else `{}`; with `outputDroppedBytes` when
   * some was dropped. The output then ends with a note for whoever reads it,
   * but what was dropped is the field: a rank can print a line that looks
   * like the note.
   */
  captured(): { output?: string; outputDroppedBytes?: number } {
    if (this.mode !== 'capture') return {};
    if (this.truncated === 0) return { output: this.chunks.join('') };
    const note = `\n[dtlab: ${this.truncated} more bytes of output from rank ${this.rank} were dropped]\n`;
    return { output: this.chunks.join('') + note, outputDroppedBytes: this.truncated };
  }
}
