/**
 * A terminal line chart of one measured column against the control, drawn
 * with asciichart (a small, dependency-free plotter that draws with
 * box-drawing characters and labels the y axis). The control's values are
 * few and discrete (2, 4, 8 ranks), so each is held flat over its own
 * stretch of columns (a step chart) rather than joined by slopes that
 * suggest measurements in between, and they are labelled under the axis.
 */
import asciichart from 'asciichart';

/** Options of `stepChart`. */
export interface ChartOptions {
  /** Rows of the plot area. Default 10. */
  height?: number;
  /** Columns given to each control value. Default 8. */
  columnsPerValue?: number;
  /** How y labels are written. */
  format?: (v: number) => string;
}

/** `ys` against the control values `xs`, as text lines (no colour). */
export function stepChart(xs: readonly number[], ys: readonly number[], opts: ChartOptions = {}): string {
  if (xs.length !== ys.length || xs.length === 0) throw new RangeError(`stepChart: need as many y values as x values (got ${xs.length} and ${ys.length})`);
  const width = opts.columnsPerValue ?? 8;
  const series = ys.flatMap((y) => new Array<number>(width).fill(y));
  const labelWidth = 12;
  const format = opts.format ?? ((v: number) => Number(v.toPrecision(4)).toString());
  const plot = asciichart.plot(series, { height: opts.height ?? 10, format: (v: number) => format(v).padStart(labelWidth - 2) + ' ' });
  // The plot's first column of data starts after the label and the axis character.
  const axis = ' '.repeat(labelWidth) + xs.map((x) => String(x).padEnd(width)).join('');
  return `${plot}\n${axis}`;
}
