/**
 * A node of the autograd graph: the op that produced a tensor, its inputs,
 * and what its gradient rule needs. Tensors produced by an op point to their
 * node; leaves (tensors you create) have none.
 */
import { AutogradError, fmtShape } from '../errors.ts';
import type { Tensor } from '../tensor.ts';

/** What a gradient rule reads: inputs and output, checked against in-place edits. */
export class GradContext {
  /** Storage versions of inputs and output when the op ran (see `Tensor._version`). */
  private readonly versions: number[];

  constructor(
    readonly op: string,
    private readonly inputs: readonly Tensor[],
    private readonly out: Tensor,
    /** Op-specific values, such as the reduced dims or the argmax positions. */
    readonly opts: Readonly<Record<string, unknown>>,
  ) {
    this.versions = [...inputs.map((t) => t._version), out._version];
  }

  /** Input `i` as it was in the forward pass. */
  input(i: number): Tensor {
    const t = this.inputs[i]!;
    this.checkUnchanged(t, this.versions[i]!, `input ${i}`);
    return t;
  }

  /** The op's output as it was in the forward pass. */
  output(): Tensor {
    this.checkUnchanged(this.out, this.versions[this.inputs.length]!, 'output');
    return this.out;
  }

  /** Shape of input `i` (always safe to read: shapes never change in place). */
  inputShape(i: number): readonly number[] {
    return this.inputs[i]!.shape;
  }

  private checkUnchanged(t: Tensor, version: number, what: string): void {
    if (t._version !== version) {
      throw new AutogradError(
        this.op,
        `the ${what} (shape ${fmtShape(t.shape)}) was modified in place after the forward pass used it, so its gradient would be wrong. ` +
          'Clone the tensor before modifying it, or modify it only after calling backward().',
      );
    }
  }
}

/** The gradients of a node's inputs, or a promise of them (a custom function whose backward communicates). */
export type InputGrads = (Tensor | null)[] | Promise<(Tensor | null)[]>;

/**
 * An edge of the graph: the op's name, its inputs, and the context for its
 * rule. A built-in op's rule is looked up in `gradRules` by name; a custom
 * function (function.ts) brings its own `backward`.
 */
export interface Node {
  readonly op: string;
  readonly inputs: readonly Tensor[];
  readonly ctx: GradContext | null;
  readonly backward?: (g: Tensor, needs: readonly boolean[]) => InputGrads;
}
