/**
 * The client's browser build: bundled for the browser, its entry holds no Node.js module and no zod; the
 * signing module (node:crypto) lands in a chunk of its own that only server mode loads; the version-2 signer
 * uses WebCrypto and no Node.js module at all.
 */
import path from 'node:path';
import { buildSync } from 'esbuild';
import { REPO_ROOT } from '../../../../../support/paths';

const ENTRY = path.join(REPO_ROOT, 'packages', 'client', 'src', 'index.ts');

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
  // Version 1's signer (node:crypto), version 2's WebCrypto signer, and the string both sign.
  expect(chunks).toHaveLength(3);
  const withNodeCrypto = chunks.filter((chunk) => chunk.text.includes('node:crypto'));
  expect(withNodeCrypto.map((chunk) => chunk.name)).toEqual([expect.stringMatching(/^signature-.*\.js$/)]);
  const webCrypto = chunks.find((chunk) => chunk.text.includes('crypto.subtle'));
  expect(webCrypto?.text).not.toMatch(/from\s*["']node:/);
  // Small enough to ship: a few kilobytes, not a framework.
  expect(entry?.text.length).toBeLessThan(20_000);
});
