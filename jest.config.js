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
  setupFiles: ['<rootDir>/test/setup-env.js'],
};

module.exports = {
  testTimeout: 30000,
  projects: ['unit', 'integration', 'infra'].map((name) => ({
    ...common,
    displayName: name,
    testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  })),
};
