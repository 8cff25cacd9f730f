/**
 * Jest, in three projects that prove different things (`npm run test:unit`, `test:integration`, `test:infra`;
 * `npm test` runs all three): unit (pure logic, no I/O), integration (the real pipeline over HTTP against an
 * in-process dynalite) and infra (CDK assertions on the synthesized template). TypeScript through ts-jest (type
 * checking is `npm run lint`'s job), middy (ESM-only) transformed too.
 */
const common = {
  testEnvironment: 'node',
  rootDir: __dirname,
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true }, diagnostics: false }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@middy)'],
  // The client package's sources import './x.js' as Node.js ES modules require; here they are the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/setup-env.js'],
};

module.exports = {
  testTimeout: 30000,
  // package, walkthrough and browser: the client as a partner installs it, the README as a user runs it, /docs in
  // chromium.
  projects: ['unit', 'integration', 'infra', 'package', 'walkthrough', 'browser'].map((name) => ({
    ...common,
    displayName: name,
    testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  })),
};
