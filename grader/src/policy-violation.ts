/**
 * What the policy check reports (policy.ts), apart from the check itself: the
 * grader's own process formats violations for the rubric and never parses a
 * submission, so it imports this module and not policy.ts, whose parser
 * costs about 0.1 s to load.
 */

/** One rule broken at one place. */
export interface PolicyViolation {
  file: string;
  line: number;
  column: number;
  rule: 'import' | 'dynamic-code' | 'host-access' | 'patching' | 'top-level-await' | 'syntax';
  message: string;
}

/** The first `max` violations, one `file:line:column message` a line, and how many more there are. */
export function formatViolations(v: readonly PolicyViolation[], max = 10): string {
  const lines = v.slice(0, max).map((x) => `${x.file}:${x.line}:${x.column} ${x.message}`);
  if (v.length > max) lines.push(`... and ${v.length - max} more`);
  return lines.join('\n');
}
