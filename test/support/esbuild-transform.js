/**
 * Jest transform: TypeScript, and middy's ES modules, to CommonJS with esbuild, file by file. Type checking is
 * `npm run lint`'s job (`tsc --noEmit`), so tests only need the types stripped, which esbuild does in well under a
 * millisecond per file. The project writes no `jest.mock` calls, which esbuild would not hoist.
 */
const { createHash } = require('node:crypto');
const { transformSync } = require('esbuild');
const { version } = require('esbuild/package.json');

const options = {
  format: 'cjs',
  target: 'node20',
  // As tsc compiles for CommonJS: `import(x)` becomes a `require`, which jest's module registry serves.
  supported: { 'dynamic-import': false },
  sourcemap: 'external',
  // The tsconfig setting that changes emitted code (target ES2022 implies it).
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
};
const optionsKey = `${version}\0${JSON.stringify(options)}`;

module.exports = {
  process(source, filename) {
    const loader = filename.endsWith('.ts') ? 'ts' : 'js';
    const { code, map } = transformSync(source, { ...options, loader, sourcefile: filename });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return createHash('sha1')
      .update(optionsKey)
      .update('\0')
      .update(filename)
      .update('\0')
      .update(source)
      .digest('hex');
  },
};
