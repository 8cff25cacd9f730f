/**
 * The local server's documentation pages: the OpenAPI document at /openapi.json and a Swagger UI page at /docs.
 * Swagger UI's assets come from the swagger-ui-dist package in node_modules, so the page works offline and
 * nothing is fetched from a CDN.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../../shared/contract/openapi-document';
import { PACKAGE_VERSION } from '../cli/generated-docs';

export interface Page {
  contentType: string;
  body: string | Buffer;
}

export const DOCS_PATH = '/docs';

/** The swagger-ui-dist files the page uses, by the name they are served under in /docs/. */
const SWAGGER_UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for a badge.
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Data access service: API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
  </head>
  <body>
    <noscript>This page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/docs-init.js"></script>
  </body>
</html>
`;

function swaggerUiDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

/**
 * GET pages by path. The document names `serverUrl`, so "Try it out" calls this server. Assets are read on
 * first request and kept: the bundle is large and never changes while the server runs.
 */
export function docsPages(serverUrl: () => string): Map<string, () => Page> {
  const json = 'application/json; charset=utf-8';
  const pages = new Map<string, () => Page>([
    [
      '/openapi.json',
      () => ({
        contentType: json,
        body: JSON.stringify(buildOpenApiDocument({ serverUrl: serverUrl(), version: PACKAGE_VERSION }), null, 2),
      }),
    ],
    [DOCS_PATH, () => ({ contentType: 'text/html; charset=utf-8', body: HTML })],
    [`${DOCS_PATH}/`, () => ({ contentType: 'text/html; charset=utf-8', body: HTML })],
    [`${DOCS_PATH}/docs-init.js`, () => ({ contentType: 'text/javascript; charset=utf-8', body: INITIALIZER })],
  ]);
  for (const [file, contentType] of Object.entries(SWAGGER_UI_ASSETS)) {
    let body: Buffer | undefined;
    pages.set(`${DOCS_PATH}/${file}`, () => {
      body ??= readFileSync(path.join(swaggerUiDir(), file));
      return { contentType, body };
    });
  }
  return pages;
}
