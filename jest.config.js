/**
 * Jest, in projects that prove different things (`npm run test:unit`, `test:integration`, `test:infra` run one;
 * `npm test` runs them all): unit (pure logic, no I/O), integration (the real pipeline over HTTP against an
 * in-process dynalite, worker threads, child processes), infra (CDK assertions on the synthesized template and the
 * synthesized bundles), package, walkthrough and browser; and moto (the deployment's state machines on moto's Step
 * Functions, run by .ci/integration-on-moto only). Each of unit, integration, infra and moto mirrors the source
 * tree: a test sits at the path of the module it exercises, or in a folder of that name when it has several.
 * TypeScript and middy's ES modules are compiled by esbuild (test/support/esbuild-transform.js): type checking is
 * `npm run lint`'s job.
 */
const common = {
  testEnvironment: 'node',
  rootDir: __dirname,
  transform: {
    '^.+\\.[tj]s$': '<rootDir>/test/support/esbuild-transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!@middy)'],
  // The client package's sources import './x.js' as Node.js ES modules require; here they are the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/setup-env.js'],
};

// moto: the deployment's state machines run by moto's Step Functions interpreter, only where moto's server and a
// Lambda endpoint for it are given (.ci/integration-on-moto sets DAS_TEST_LAMBDA_ENDPOINT_PORT).
const moto = process.env.DAS_TEST_LAMBDA_ENDPOINT_PORT ? ['moto'] : [];

module.exports = {
  testTimeout: 30000,
  // package, walkthrough and browser: the client as a partner installs it, the README's and docs' examples as a
  // user runs them, /docs in Chromium.
  projects: ['unit', 'integration', 'infra', 'package', 'walkthrough', 'browser', ...moto].map((name) => ({
    ...common,
    displayName: name,
    testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  })),
};
