/** A module that programs/untrusted.ts imports: untrusted code may load its own compiled files. */
export function triple(x: number): number {
  return 3 * x;
}
