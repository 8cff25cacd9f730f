/**
 * Benchmarks write their figures into docs/performance.md, each into its own section between two markers
 * (`<!-- bench:name -->` … `<!-- /bench:name -->`), so that running one benchmark leaves the others' figures
 * in place. A section that is not in the file yet is appended.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PERFORMANCE_DOC = path.join(__dirname, '..', 'docs', 'performance.md');

export function writeSection(name: string, markdown: string): void {
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const current = existsSync(PERFORMANCE_DOC) ? readFileSync(PERFORMANCE_DOC, 'utf8') : '# Performance\n';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from
      ? `${current.slice(0, from)}${block}${current.slice(to + end.length)}`
      : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(PERFORMANCE_DOC, next);
}
