/** Jest: TypeScript through ts-jest (type checking is `npm run lint`'s job), middy (ESM-only) transformed too. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  rootDir: '.',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true }, diagnostics: false }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@middy)'],
  // The client package's sources import './x.js' as Node.js ES modules require; here they are the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/setup-env.js'],
  testTimeout: 30000,
};
