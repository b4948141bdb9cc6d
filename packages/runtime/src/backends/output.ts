/**
 * A rank worker's stdout and stderr: prefixed with `[rank r]` line by line,
 * passed through, captured (up to a limit), or dropped.
 */
import type { Worker } from 'node:worker_threads';
import type { Readable } from 'node:stream';
import type { OutputMode } from '../types.ts';

/** Handles one rank's output streams according to the launch's output mode. */
export class RankOutput {
  private captureBytes = 0;
  private truncated = 0;
  private readonly chunks: string[] = [];
  private readonly ended: Promise<void>[] = [];

  constructor(
    private readonly rank: number,
    private readonly mode: OutputMode,
    private readonly limitBytes: number,
    worker: Worker,
  ) {
    this.attach(worker.stdout, process.stdout);
    this.attach(worker.stderr, process.stderr);
  }

  private attach(stream: Readable, sink: NodeJS.WriteStream): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      if (this.mode === 'ignore') return;
      if (this.mode === 'inherit') return void sink.write(text);
      if (this.mode === 'capture') return this.capture(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      if (lines.length) sink.write(lines.map((l) => `[rank ${this.rank}] ${l}\n`).join(''));
    });
    this.ended.push(
      new Promise((resolve) =>
        stream.on('end', () => {
          if (this.mode === 'prefix' && partial) sink.write(`[rank ${this.rank}] ${partial}\n`);
          partial = '';
          resolve();
        }),
      ),
    );
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

  /** Waits (briefly) until the streams have ended, so no output is lost. */
  async flush(): Promise<void> {
    await Promise.race([Promise.all(this.ended), new Promise((r) => setTimeout(r, 200))]);
  }

  /** `{ output }` in capture mode (with a note if some was dropped), else `{}`. */
  captured(): { output?: string } {
    if (this.mode !== 'capture') return {};
    const note = this.truncated > 0 ? `\n[dtlab: ${this.truncated} more bytes of output from rank ${this.rank} were dropped]\n` : '';
    return { output: this.chunks.join('') + note };
  }
}
