/**
 * The generated documents: docs/openapi.json and docs/config.schema.json are what the schemas generate (no
 * drift), the OpenAPI document passes a standard OpenAPI 3.1 validator, and the local server serves it at
 * /openapi.json with a Swagger UI page at /docs whose scripts and styles come from the server itself.
 * (The page's rendering was checked once in headless Chromium; CI checks the HTML and its assets.)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GENERATED_DOCUMENTS, PACKAGE_VERSION, REPOSITORY_ROOT } from '../../../../bin/cli/generated-docs';
import { buildOpenApiDocument } from '../../../../shared/contract/openapi-document';
import { REPO_ROOT } from '../../../support/paths';
import { ServiceHarness } from '../../../support/service-harness';

const harness = new ServiceHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

function validate(document: unknown): { valid: boolean; version?: string; errors?: unknown } {
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'test', 'support', 'validate-openapi.mjs')], {
    input: JSON.stringify(document),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`validator failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe('checked-in documents', () => {
  it.each(GENERATED_DOCUMENTS.map((d) => [d.file, d]))('%s is what `npm run openapi` generates', (file, document) => {
    const checkedIn = readFileSync(path.join(REPOSITORY_ROOT, file), 'utf8');
    // On failure: run `npm run openapi` and commit the result.
    expect(checkedIn).toBe(document.render());
  });

  it('the demo configuration points editors at the configuration schema', () => {
    const demo = JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'config', 'demo.json'), 'utf8'));
    expect(path.resolve(REPOSITORY_ROOT, 'config', demo.$schema)).toBe(
      path.join(REPOSITORY_ROOT, 'docs', 'config.schema.json'),
    );
  });
});

describe('OpenAPI validity', () => {
  it('the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', () => {
    expect(validate(buildOpenApiDocument())).toEqual({ valid: true, version: '3.1' });
  });

  it('the validator does catch a broken document', () => {
    const broken = buildOpenApiDocument() as { paths: Record<string, unknown> };
    broken.paths['/openapi/data/get-one'] = { post: { responses: { 200: { $ref: '#/components/responses/Nope' } } } };
    expect(validate(broken).valid).toBe(false);
  });
});

describe('served by the local server', () => {
  it('/openapi.json is the document, naming this server', async () => {
    const res = await fetch(`${harness.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual(buildOpenApiDocument({ serverUrl: harness.url, version: PACKAGE_VERSION }));
  });

  it('/docs is a Swagger UI page whose assets are all served locally with the right types', async () => {
    const res = await fetch(`${harness.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('<div id="swagger-ui"></div>');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(assets).toEqual([
      '/docs/swagger-ui.css',
      '/docs/favicon-32x32.png',
      '/openapi.json',
      '/docs/swagger-ui-bundle.js',
      '/docs/docs-signer.js',
      '/docs/docs-init.js',
    ]);
    // Offline: nothing is loaded from another host.
    expect(html).not.toMatch(/https?:\/\//);
    const expectedTypes: Record<string, string> = {
      '/docs/swagger-ui.css': 'text/css; charset=utf-8',
      '/docs/favicon-32x32.png': 'image/png',
      '/openapi.json': 'application/json; charset=utf-8',
      '/docs/swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
      '/docs/docs-signer.js': 'text/javascript; charset=utf-8',
      '/docs/docs-init.js': 'text/javascript; charset=utf-8',
    };
    for (const asset of assets) {
      const answer = await fetch(`${harness.url}${asset}`);
      expect([asset, answer.status, answer.headers.get('content-type')]).toEqual([asset, 200, expectedTypes[asset]]);
      const body = Buffer.from(await answer.arrayBuffer());
      expect(body.length).toBeGreaterThan(100);
    }
    const bundle = await (await fetch(`${harness.url}/docs/swagger-ui-bundle.js`)).text();
    expect(bundle).toContain('SwaggerUIBundle');
    const init = await (await fetch(`${harness.url}/docs/docs-init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    // The page's signer is one browser script with no module loader and nothing of Node.js.
    const signer = await (await fetch(`${harness.url}/docs/docs-signer.js`)).text();
    expect(signer).toMatch(/^"use strict";\nvar DasDocsSigner = \(\(\) => \{/);
    expect(signer).not.toMatch(/require\(["']node:/);
  });
});
