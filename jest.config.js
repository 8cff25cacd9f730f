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
  setupFiles: ['<rootDir>/test/setup-env.js'],
  testTimeout: 30000,
};
