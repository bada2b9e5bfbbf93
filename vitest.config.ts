import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Tests run on the contract's sources, so they need no build of it first. */
const contract = fileURLToPath(new URL('./packages/contract/src/index.ts', import.meta.url));

/**
 * Two projects: `unit` (in-process, fast) and `integration` (real processes: the development IdP, a
 * hostile IdP, the server listening on loopback). Browser end-to-end tests are Playwright's (e2e/).
 */
export default defineConfig({
  resolve: { alias: { '@gatehouse/contract': contract } },
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'packages/*/test/integration/**'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['packages/*/test/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
