/**
 * The kit's templates (kit/templates/): text files with `{{name}}`
 * placeholders. A file name may hold placeholders too, and a trailing
 * `.tmpl` is dropped, so that no tool mistakes a template for real code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { walkFiles } from './leaks.ts';
import { UserError } from '@dtlab/grader/grading';

/** Values of the placeholders. */
export type TemplateVars = Readonly<Record<string, string>>;

/** A template that names a placeholder nobody gave a value. */
export class TemplateError extends UserError {
  override name = 'TemplateError';
}

/** `text` with every `{{name}}` replaced by `vars[name]`. */
export function render(text: string, vars: TemplateVars, where = 'template'): string {
  return text.replace(/\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new TemplateError(`BUG: ${where} uses {{${name}}}, which has no value (known: ${Object.keys(vars).join(', ')})`);
    return v;
  });
}

/** Every file of template folder `dir`, rendered: `{ path, text }` with the path rendered and `.tmpl` dropped. */
export function renderTree(dir: string, vars: TemplateVars): { path: string; text: string }[] {
  return walkFiles(dir).map((f) => ({
    path: render(f, vars, f).replace(/\.tmpl$/, ''),
    text: render(readFileSync(join(dir, f), 'utf8'), vars, join(dir, f)),
  }));
}
