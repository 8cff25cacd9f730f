/**
 * Where tests find the repository and their fixtures, so that a test file's place in the tree (it mirrors the module
 * it exercises) does not decide how many `..` lead back to them.
 */
import path from 'node:path';

export const REPO_ROOT = path.join(__dirname, '..', '..');
export const FIXTURES_DIR = path.join(REPO_ROOT, 'test', 'fixtures');
