/**
 * `Module`, the base of every layer and model. A module's parameters are the
 * tensors that require grad among its own fields, and those of its
 * sub-modules, found in field declaration order: the same order and dotted
 * names (`0.weight`, `fc1.bias`) as torch's `named_parameters()`.
 */
import { ShapeError, fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import { Tensor } from '../tensor.ts';
import { noGrad } from '../autograd/grad-mode.ts';

/** A layer or model: holds parameters and sub-modules and maps inputs to outputs. */
export abstract class Module {
  /** Computes the module's output. */
  abstract forward(...inputs: Tensor[]): Tensor;

  /** Calls `forward`. */
  call(...inputs: Tensor[]): Tensor {
    return this.forward(...inputs);
  }

  /** Own fields that are parameters or sub-modules, with their names. */
  protected children(): [string, Tensor | Module][] {
    const out: [string, Tensor | Module][] = [];
    for (const [key, value] of Object.entries(this)) {
      if (value instanceof Tensor && value.requiresGrad) out.push([key, value]);
      else if (value instanceof Module) out.push([key, value]);
      else if (Array.isArray(value)) {
        value.forEach((v, i) => {
          if (v instanceof Module || (v instanceof Tensor && v.requiresGrad)) out.push([`${key}.${i}`, v]);
        });
      }
    }
    return out;
  }

  /** Every parameter with its dotted name, depth first in declaration order. */
  namedParameters(prefix = ''): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [name, child] of this.children()) {
      const full = prefix + name;
      if (child instanceof Module) out.push(...child.namedParameters(full + '.'));
      else out.push([full, child]);
    }
    return out;
  }

  /** Every parameter, in the order of `namedParameters`. */
  parameters(): Tensor[] {
    return this.namedParameters().map(([, p]) => p);
  }

  /** Total number of parameter elements. */
  numParameters(): number {
    return this.parameters().reduce((n, p) => n + p.numel, 0);
  }

  /**
   * The parameters by name, as detached views sharing storage with the
   * parameters (like torch's state_dict): clone them to keep a snapshot.
   */
  stateDict(): Record<string, Tensor> {
    return Object.fromEntries(this.namedParameters().map(([n, p]) => [n, p.detach()]));
  }

  /**
   * Copies values from `state` into the parameters. With `strict` (the
   * default) every name must match exactly; shapes must always match.
   */
  loadStateDict(state: Record<string, Tensor>, { strict = true } = {}): void {
    const named = this.namedParameters();
    const names = new Set(named.map(([n]) => n));
    if (strict) {
      const missing = [...names].filter((n) => !(n in state));
      const unexpected = Object.keys(state).filter((n) => !names.has(n));
      if (missing.length || unexpected.length) {
        throw new Error(`loadStateDict: missing keys [${missing.join(', ')}], unexpected keys [${unexpected.join(', ')}]`);
      }
    }
    noGrad(() => {
      for (const [name, p] of named) {
        const src = state[name];
        if (!src) continue;
        if (!sameShape(src.shape, p.shape)) {
          throw new ShapeError('loadStateDict', [p.shape, src.shape], `parameter ${name} has shape ${fmtShape(p.shape)} but the state has ${fmtShape(src.shape)}`);
        }
        p.copy_(src);
      }
    });
  }

  /** Clears every parameter's gradient (sets `.grad` to null, as torch does by default). */
  zeroGrad(): void {
    for (const p of this.parameters()) p.grad = null;
  }
}
