import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/bundleSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default here is one worker (cores - 1); the e2e tests mostly wait on daemons they
    // spawn, so two files at once cut the suite from about 1,060 s to 815 s on this 2-core machine.
    maxWorkers: 2,
  },
});
