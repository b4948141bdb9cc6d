/** Custom autograd functions (forward and backward written by hand, either may be async). */
export { Function, FunctionCtx, type BackwardResult } from './function.ts';
