import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Tests run on the contract's sources, so they need no build of it first. */
const contract = fileURLToPath(new URL('./packages/contract/src/index.ts', import.meta.url));
const contractPaths = fileURLToPath(new URL('./packages/contract/src/paths.ts', import.meta.url));

/** The integration tests: real processes (the development IdP, a hostile IdP, the server listening on loopback). */
const integration = {
  include: ['packages/*/test/integration/**/*.test.ts'],
  environment: 'node',
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

/**
 * Three projects: `unit` (in-process, fast), and the integration tests twice — a matrix over the
 * storage backend: `integration` on SQLite (the embedded default) and `integration-postgres` on a
 * throwaway PostgreSQL server started for the run (test/integration/support/postgresSetup.ts; each
 * Gatehouse gets a database of its own, test/integration/support/testStore.ts). Browser end-to-end
 * tests are Playwright's (e2e/).
 */
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@gatehouse\/contract$/, replacement: contract },
      { find: /^@gatehouse\/contract\/paths$/, replacement: contractPaths },
    ],
  },
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'packages/web/build/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'packages/*/test/integration/**'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          ...integration,
          // These are about PostgreSQL itself (servers they start, restart and cut): they run once, below.
          exclude: [
            '**/node_modules/**',
            'packages/server/test/integration/cliPostgres.test.ts',
            'packages/server/test/integration/faults.test.ts',
            // Two nodes on one database: PostgreSQL only.
            'packages/server/test/integration/openIdProviderTwoNodes.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'integration-postgres',
          ...integration,
          env: { GATEHOUSE_TEST_DATABASE: 'postgres' },
          globalSetup: ['packages/server/test/integration/support/postgresSetup.ts'],
        },
      },
    ],
  },
});
