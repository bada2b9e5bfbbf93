import { defineConfig } from '@playwright/test';

/**
 * Browser tests against the real stack (Gatehouse, the development IdP and the demo app as separate
 * processes, see support/globalSetup.ts), driven in Debian's Chromium: Playwright's own browser
 * download is not used.
 */
export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // The console journeys take 40-55 s on two cores with the whole stack running beside the browser;
  // a busy machine must not fail them, a hang still does.
  timeout: 90_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? 'list' : [['list']],
  globalSetup: './support/globalSetup.ts',
  outputDir: '../test-results',
  use: {
    browserName: 'chromium',
    headless: true,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
