/**
 * The local server's documentation pages: the OpenAPI document at /openapi.json and a Swagger UI page at /docs.
 * Swagger UI's assets come from the swagger-ui-dist package in node_modules, so the page works offline and
 * nothing is fetched from a CDN. The page asks once for an application's keys (or a client key) in a bar that stays
 * at the top, keeps them in the tab's sessionStorage only, and signs every "Try it out" request in the browser
 * (docs-signer.ts). The bar is the only place for keys: Swagger UI's own "Authorize" dialog, whose raw header
 * fields would compete with it, is left out, and "Execute" without keys sends nothing and points at the bar.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
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

// The credentials panel and Swagger UI. The keys live in sessionStorage: gone when the tab closes, never sent
// anywhere but into the signature (or, a client key, its header). validatorUrl null: Swagger UI would otherwise
// send the document to validator.swagger.io for a badge.
const INITIALIZER = `(function () {
  var STORE = 'das-docs-credentials';
  var versions = {};
  fetch('/docs/applications.json').then(function (r) { return r.json(); }).then(function (apps) {
    apps.forEach(function (a) { versions[a.appCode] = a.signatureVersion; });
  });
  function load() {
    try { return JSON.parse(sessionStorage.getItem(STORE) || 'null'); } catch (e) { return null; }
  }
  function show() {
    var saved = load();
    var form = document.getElementById('das-credentials');
    var status = document.getElementById('das-signing-as');
    form.hidden = !!saved;
    status.hidden = !saved;
    if (saved) {
      document.getElementById('das-signing-as-text').textContent = saved.clientKey
        ? 'Try it out sends ' + saved.appCode + "'s client key (X-User-AK) to the /client/ paths."
        : 'Try it out signs every request as ' + saved.appCode + ' (keys kept in this tab only).';
    }
  }
  function value(id) { return document.getElementById(id).value.trim(); }
  // Execute without the keys it needs: the bar (which stays at the top) says why, with the field to fill focused.
  function needKeys(message) {
    var saved = load();
    document.getElementById(saved ? 'das-signing-as-text' : 'das-credentials-error').textContent = message;
    var first = ['das-app-code', 'das-access-key', 'das-signing-secret'].filter(function (id) { return !value(id); })[0];
    document.getElementById(saved ? 'das-forget' : first || 'das-use').focus();
  }
  // What keeps "Execute" from sending this operation with the keys in the bar, if anything.
  function keysProblem(pathName) {
    var credentials = load();
    if (!credentials) {
      return 'Try it out needs keys: enter an app code with its access key and signing secret, or a client key, ' +
        'in the bar at the top of this page, then Execute again.';
    }
    if (!credentials.clientKey && String(pathName).indexOf('/client/') === 0) {
      return 'This path takes a client key (X-User-AK): Forget the keys in the bar at the top of this page, ' +
        'enter the app code with a client key, then Execute again.';
    }
    return undefined;
  }
  // The bar is the only place for keys: Swagger UI's "Authorize" button and each operation's lock are left out,
  // and "Execute" without the keys its operation needs sends nothing (and shows no progress) but says why in the bar.
  function keyBarOnly() {
    var nothing = function () { return function () { return null; }; };
    function guardedExecute(Execute, system) {
      return function (props) {
        return system.React.createElement(Execute, Object.assign({}, props, {
          onExecute: function () {
            if (!keysProblem(props.path) && props.onExecute) props.onExecute();
          },
          specActions: Object.assign({}, props.specActions, {
            execute: function (request) {
              var problem = keysProblem(props.path);
              if (problem) needKeys(problem);
              else props.specActions.execute(request);
            },
          }),
        }));
      };
    }
    return { wrapComponents: { authorizeBtn: nothing, authorizeOperationBtn: nothing, execute: guardedExecute } };
  }
  window.addEventListener('load', function () {
    document.getElementById('das-credentials').addEventListener('submit', function (event) {
      event.preventDefault();
      var error = document.getElementById('das-credentials-error');
      var credentials = { appCode: value('das-app-code') };
      if (value('das-client-key')) credentials.clientKey = value('das-client-key');
      else { credentials.accessKey = value('das-access-key'); credentials.signingSecret = value('das-signing-secret'); }
      if (!credentials.appCode || !(credentials.clientKey || (credentials.accessKey && credentials.signingSecret))) {
        error.textContent = 'Enter the app code with its access key and signing secret, or with a client key.';
        return;
      }
      error.textContent = '';
      sessionStorage.setItem(STORE, JSON.stringify(credentials));
      show();
    });
    document.getElementById('das-forget').addEventListener('click', function () {
      sessionStorage.removeItem(STORE);
      show();
    });
    show();
    window.ui = SwaggerUIBundle({
      url: '/openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      plugins: [keyBarOnly],
      layout: 'BaseLayout',
      requestInterceptor: function (request) {
        var credentials = load();
        if (request.loadSpec || !credentials) return request;
        var signing = Object.assign({ signatureVersion: versions[credentials.appCode] || 1 }, credentials);
        return DasDocsSigner.prepareDocsRequest(request, signing).then(function (prepared) {
          return Object.assign(request, prepared);
        });
      },
    });
  });
})();
`;

/**
 * The key bar. The app code starts as the configuration's first application, with every configured one offered
 * in its list (codes are letters, digits, `_` and `-`: nothing to escape).
 */
function credentialsPanel(appCodes: string[]): string {
  const options = appCodes.map((code) => `<option value="${code}"></option>`).join('');
  return `<section class="das-panel" aria-label="Credentials for Try it out">
      <form id="das-credentials" hidden>
        <strong>Try it out signs each request in this page.</strong>
        Enter an application's keys once; they stay in this tab (sessionStorage) and are never sent.
        <div class="das-fields">
          <label>App code <input id="das-app-code" name="appCode" autocomplete="off" list="das-app-codes" value="${appCodes[0] ?? ''}"></label>
          <datalist id="das-app-codes">${options}</datalist>
          <label>Access key <input id="das-access-key" name="accessKey" autocomplete="off"></label>
          <label>Signing secret <input id="das-signing-secret" name="signingSecret" type="password" autocomplete="off"></label>
          <span>or</span>
          <label>Client key <input id="das-client-key" name="clientKey" type="password" autocomplete="off"></label>
          <button type="submit" id="das-use">Use these</button>
        </div>
        <span id="das-credentials-error" role="alert"></span>
      </form>
      <div id="das-signing-as" hidden><span id="das-signing-as-text"></span> <button type="button" id="das-forget">Forget</button></div>
    </section>`;
}

const PANEL_STYLE = `<style>
      .das-panel { position: sticky; top: 0; z-index: 10; font-family: sans-serif; font-size: 14px; max-width: 1460px; margin: 0 auto; padding: 12px 20px; background: #f4f6f8; border-bottom: 1px solid #d0d7de; }
      .das-fields { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: end; margin-top: 8px; }
      .das-fields label { display: flex; flex-direction: column; gap: 2px; }
      #das-credentials-error { color: #b42318; }
    </style>`;

const docsHtml = (appCodes: string[]) => `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Data access service: API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
    ${PANEL_STYLE}
  </head>
  <body>
    <noscript>This page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
    ${credentialsPanel(appCodes)}
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/docs-signer.js"></script>
    <script src="${DOCS_PATH}/docs-init.js"></script>
  </body>
</html>
`;

/** docs-signer.ts for the browser: one script defining `DasDocsSigner`, with nothing of Node.js. */
export function bundleDocsSigner(): string {
  const result = buildSync({
    entryPoints: [path.join(__dirname, 'docs-signer.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'DasDocsSigner',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  return (result.outputFiles[0] as { text: string }).text;
}

function swaggerUiDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

/**
 * GET pages by path. The document names `serverUrl`, so "Try it out" calls this server. Assets are read on
 * first request and kept: the bundle is large and never changes while the server runs.
 */
export function docsPages(
  serverUrl: () => string,
  applications: () => { appCode: string; signatureVersion?: number | undefined }[] = () => [],
): Map<string, () => Page> {
  const json = 'application/json; charset=utf-8';
  const page = (): Page => ({
    contentType: 'text/html; charset=utf-8',
    body: docsHtml(applications().map((a) => a.appCode)),
  });
  const pages = new Map<string, () => Page>([
    [
      '/openapi.json',
      () => ({
        contentType: json,
        body: JSON.stringify(buildOpenApiDocument({ serverUrl: serverUrl(), version: PACKAGE_VERSION }), null, 2),
      }),
    ],
    [DOCS_PATH, page],
    [`${DOCS_PATH}/`, page],
    [`${DOCS_PATH}/docs-init.js`, () => ({ contentType: 'text/javascript; charset=utf-8', body: INITIALIZER })],
    // Which signature version each application expects (no keys): the page signs version 2 for those that do.
    [
      `${DOCS_PATH}/applications.json`,
      () => ({
        contentType: json,
        body: JSON.stringify(
          applications().map((a) => ({ appCode: a.appCode, signatureVersion: a.signatureVersion ?? 1 })),
        ),
      }),
    ],
  ]);
  let signer: string | undefined;
  pages.set(`${DOCS_PATH}/docs-signer.js`, () => {
    signer ??= bundleDocsSigner();
    return { contentType: 'text/javascript; charset=utf-8', body: signer };
  });
  for (const [file, contentType] of Object.entries(SWAGGER_UI_ASSETS)) {
    let body: Buffer | undefined;
    pages.set(`${DOCS_PATH}/${file}`, () => {
      body ??= readFileSync(path.join(swaggerUiDir(), file));
      return { contentType, body };
    });
  }
  return pages;
}
