/**
 * `pnpm kit sync`: puts the wiring of `pnpm kit check` in place for every
 * exercise: the `kit:check` script of its package (turbo.ts writes the
 * turbo.json side).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatJson } from './json-format.ts';
import type { KitLayout } from './layout.ts';
import { KIT_TASK, KIT_TASK_SCRIPT } from './turbo.ts';

/** Sets the `kit:check` script of each exercise package in `folders`; returns the files it changed. */
export function syncPackageScripts(layout: KitLayout, folders: readonly string[]): string[] {
  const changed: string[] = [];
  for (const folder of folders) {
    const file = join(layout.exercises, folder, 'package.json');
    if (!existsSync(file)) continue;
    const before = readFileSync(file, 'utf8');
    const pkg = JSON.parse(before) as { scripts?: Record<string, string> };
    pkg.scripts = { ...pkg.scripts, [KIT_TASK]: KIT_TASK_SCRIPT };
    const after = formatJson(pkg);
    if (after !== before) {
      writeFileSync(file, after);
      changed.push(`exercises/${folder}/package.json`);
    }
  }
  return changed;
}
