/**
 * Grad mode: whether new ops record themselves in the autograd graph.
 * `noGrad(fn)` turns recording off for the duration of `fn`, as
 * `with torch.no_grad():` does. Optimizer steps and gradient code run in it.
 */
let enabled = true;

/** True while ops record the graph (the default). */
export function isGradEnabled(): boolean {
  return enabled;
}

/**
 * Runs `fn` with graph recording off and returns its result. Tensors made
 * inside do not require grad, and in-place updates of parameters are allowed.
 * Works for async `fn` only up to its first `await`; keep it synchronous.
 */
export function noGrad<T>(fn: () => T): T {
  const prev = enabled;
  enabled = false;
  try {
    return fn();
  } finally {
    enabled = prev;
  }
}

/** Runs `fn` with graph recording on, even inside `noGrad`. */
export function enableGrad<T>(fn: () => T): T {
  const prev = enabled;
  enabled = true;
  try {
    return fn();
  } finally {
    enabled = prev;
  }
}
