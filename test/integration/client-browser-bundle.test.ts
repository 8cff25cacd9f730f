/**
 * The client's browser build: bundled for the browser, its entry holds no Node.js module and no zod; the
 * signing module (node:crypto) lands in a chunk of its own that only server mode loads.
 */
import path from 'node:path';
import { buildSync } from 'esbuild';

const ENTRY = path.join(__dirname, '..', '..', 'packages', 'client', 'src', 'index.ts');

it('bundles for browsers with node:crypto confined to the lazily loaded signing chunk', () => {
  const result = buildSync({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    splitting: true,
    outdir: '/virtual',
    write: false,
    external: ['node:crypto'],
    logLevel: 'silent',
  });
  const files = result.outputFiles.map((file) => ({ name: path.basename(file.path), text: file.text }));
  const entry = files.find((file) => file.name === 'index.js');
  const chunks = files.filter((file) => file.name !== 'index.js');
  expect(entry?.text).toContain('/openapi/data/get-list');
  expect(entry?.text).not.toMatch(/from\s*["']node:/);
  expect(entry?.text).not.toContain('zod');
  expect(chunks.map((chunk) => chunk.name)).toEqual([expect.stringMatching(/^signature-.*\.js$/)]);
  expect(chunks[0]?.text).toContain('node:crypto');
  // Small enough to ship: a few kilobytes, not a framework.
  expect(entry?.text.length).toBeLessThan(20_000);
});
