/**
 * Builds the package with the TypeScript compiler, twice: ES modules in dist/esm (marked "type": "module") and
 * CommonJS in dist/cjs, each with its type declarations, which package.json "exports" names per condition.
 */
const { execFileSync } = require('node:child_process');
const { mkdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const builds = [
  { dir: 'esm', module: 'ES2022', moduleResolution: 'Bundler', type: 'module' },
  { dir: 'cjs', module: 'CommonJS', moduleResolution: 'Node10', type: 'commonjs' },
];
for (const build of builds) {
  const outDir = path.join(root, 'dist', build.dir);
  execFileSync(
    process.execPath,
    [
      tsc,
      '-p',
      path.join(root, 'tsconfig.build.json'),
      '--outDir',
      outDir,
      '--module',
      build.module,
      '--moduleResolution',
      build.moduleResolution,
    ],
    { stdio: 'inherit' },
  );
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type: build.type })}\n`);
}
