/**
 * The repository's text as readers get it: no file git tracks still holds the markers a merge leaves where two
 * changes met (a README or a doc that shows both sides to its reader, a source file that does not compile).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const TEXT = /\.(md|ts|js|json|ya?ml|sh|txt)$|(^|\/)run$/;
const MARKER = /^(<{7}|>{7}) |^={7}$/m;

it('no tracked text file holds merge conflict markers', () => {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => TEXT.test(file));
  expect(files.length).toBeGreaterThan(100);
  const marked = files.filter((file) => MARKER.test(readFileSync(path.join(ROOT, file), 'utf8')));
  expect(marked).toEqual([]);
});
