/**
 * Error classes of @dtlab/tensor. Each carries structured fields so that a
 * checker can read what went wrong without parsing the message.
 */

/** Shapes that an op cannot combine: `op` names the op, `shapes` the operands. */
export class ShapeError extends Error {
  override name = 'ShapeError';
  constructor(
    readonly op: string,
    readonly shapes: readonly (readonly number[])[],
    detail: string,
  ) {
    super(`${op}: ${detail}`);
  }
}

/** A misuse of autograd, such as an in-place op on a leaf that requires grad. */
export class AutogradError extends Error {
  override name = 'AutogradError';
  constructor(
    readonly op: string,
    message: string,
  ) {
    super(`${op}: ${message}`);
  }
}

/** Formats a shape the way error messages print it: `[3,4]`. */
export function fmtShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}
