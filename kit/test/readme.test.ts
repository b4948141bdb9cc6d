/**
 * The README check of `pnpm kit check`: every exercise README has a title
 * and the six sections students rely on, each with some text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReadme, README_SECTIONS } from '../src/readme.ts';
import { listExercises } from '@dtlab/grader/grading';

const complete = ['# Exercise 9: x', '', ...README_SECTIONS.flatMap((s) => [`## ${s.heading}`, '', 'Some text.', ''])].join('\n');
const errors = (md: string) => checkReadme(md).filter((p) => p.level === 'error').map((p) => p.message);

describe('checkReadme', () => {
  it('passes every README of the curriculum as it is, without a warning', () => {
    for (const e of listExercises()) expect(checkReadme(readFileSync(join(e.dir, 'README.md'), 'utf8')), e.folder).toEqual([]);
  });

  it('names each missing section and what it is for', () => {
    const md = complete.replace('## The symptom to look for', '## Notes');
    expect(errors(md)).toEqual([expect.stringMatching(/no section "## The symptom to look for" \(what goes wrong when it runs/)]);
  });

  it('matches headings by their key words', () => {
    const md = complete
      .replace('## The story', '## Background')
      .replace('## What you write', '## What you implement')
      .replace('## The symptom to look for', '## Symptoms')
      .replace('## Run and grade', '## Running and grading');
    expect(errors(md)).toEqual([]);
  });

  it('refuses an empty section, and ignores headings inside code blocks and comments', () => {
    const md = complete.replace('## What parity means here\n\nSome text.', '## What parity means here\n\n<!-- TODO -->\n```md\n## Run and grade\n```');
    expect(errors(md)).toEqual([]);
    expect(errors(complete.replace('## What parity means here\n\nSome text.', '## What parity means here\n\n<!-- later -->'))).toEqual([expect.stringMatching(/"## What parity means here" \(line \d+\) is empty/)]);
  });

  it('needs a title, and warns about TODO markers and sections out of order', () => {
    expect(errors(complete.replace('# Exercise 9: x', ''))).toEqual([expect.stringMatching(/no `# Exercise N: title` heading/)]);
    const warnings = checkReadme(`${complete}\nTODO: write the hints\n`.replace('## The story', '## Zzz').replace('## Zzz\n\nSome text.', '') + '\n## The story\n\nLate.\n').filter((p) => p.level === 'warning');
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/order What you write .* The story; students expect The story/), expect.stringMatching(/TODO/)]);
  });
});
