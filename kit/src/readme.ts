/**
 * The sections every exercise README must have, and the check that finds
 * them. The names come from the first exercises' READMEs; a heading matches
 * a section by its key words, so "What you implement" counts as "What you
 * write" and "The symptoms to look for" as "The symptom to look for".
 */

/** A required section: its canonical heading and what a heading must say to count. */
export interface ReadmeSection {
  heading: string;
  /** Tested against the heading text, lower-cased. */
  pattern: RegExp;
  /** Why students need it (shown when it is missing). */
  purpose: string;
}

/** The required `##` sections, in the order the READMEs use. */
export const README_SECTIONS: readonly ReadmeSection[] = [
  { heading: 'The story', pattern: /\bstory\b|\bbackground\b/, purpose: 'why the technique exists, before any code' },
  { heading: 'What you write', pattern: /\bwhat you (write|implement|build|code)\b|\byour (task|job)\b/, purpose: 'the exported signature and its contract' },
  { heading: 'The tempting idea in the starter', pattern: /\btempting\b|\bthe starter\b/, purpose: "the plausible idea behind the starter's flaw (not the cure)" },
  { heading: 'The symptom to look for', pattern: /\bsymptoms?\b/, purpose: 'what goes wrong when it runs, so the student can recognise it' },
  { heading: 'What parity means here', pattern: /\bparity\b/, purpose: 'what the checks compare with, and the tolerances' },
  { heading: 'Run and grade', pattern: /\brun\b.*\bgrade\b|\bgrad(e|ing)\b/, purpose: 'the commands: pnpm test, pnpm grade, pnpm hint, pnpm explain' },
];

/** A problem with a README, in words an author can act on. */
export interface ReadmeProblem {
  level: 'error' | 'warning';
  message: string;
}

interface Heading {
  level: number;
  text: string;
  line: number;
}

/** The headings of a Markdown text, outside fenced code blocks. */
export function headings(markdown: string): Heading[] {
  const out: Heading[] = [];
  let fenced = false;
  markdown.split('\n').forEach((raw, i) => {
    if (/^\s*(```|~~~)/.test(raw)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
    if (m) out.push({ level: m[1]!.length, text: m[2]!, line: i + 1 });
  });
  return out;
}

/** Checks an exercise README: a `#` title, every required `##` section with some text, in order. */
export function checkReadme(markdown: string): ReadmeProblem[] {
  const problems: ReadmeProblem[] = [];
  const all = headings(markdown);
  if (!all.some((h) => h.level === 1)) problems.push({ level: 'error', message: 'has no `# Exercise N: title` heading' });
  const sections = all.filter((h) => h.level === 2);
  const lines = markdown.split('\n');
  const found: { s: ReadmeSection; index: number }[] = [];
  for (const s of README_SECTIONS) {
    const index = sections.findIndex((h) => s.pattern.test(h.text.toLowerCase()));
    if (index < 0) {
      problems.push({ level: 'error', message: `has no section "## ${s.heading}" (${s.purpose})` });
      continue;
    }
    const h = sections[index]!;
    const next = all.find((x) => x.line > h.line && x.level <= 2)?.line ?? lines.length + 1;
    const body = lines.slice(h.line, next - 1).join('\n').replace(/<!--[\s\S]*?-->/g, '').trim();
    if (!body) problems.push({ level: 'error', message: `section "## ${h.text}" (line ${h.line}) is empty` });
    found.push({ s, index });
  }
  const order = [...found].sort((a, b) => a.index - b.index);
  if (order.some((x, i) => x !== found[i])) {
    problems.push({ level: 'warning', message: `has its sections in the order ${order.map((x) => x.s.heading).join(' · ')}; students expect ${README_SECTIONS.map((x) => x.heading).join(' · ')}` });
  }
  if (/\bTODO\b/.test(markdown)) problems.push({ level: 'warning', message: "still has TODO markers (the template's, or yours)" });
  return problems;
}
