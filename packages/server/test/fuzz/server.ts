import { startGatehouse } from '../integration/support/gatehouse.js';

/**
 * The Gatehouse under fuzz, in a process of its own (started by environment.ts) so that a crash — an
 * uncaught exception, an unhandled rejection — ends it and is seen, instead of taking the harness down.
 * Reads its configuration as JSON from FUZZ_GATEHOUSE_CONFIG and says READY on stdout.
 */
const config = JSON.parse(process.env.FUZZ_GATEHOUSE_CONFIG ?? '{}') as Parameters<typeof startGatehouse>[0];
const gatehouse = await startGatehouse(config);
process.stdout.write(`READY ${gatehouse.port}\n`);
process.on('SIGTERM', () => {
  void gatehouse.close().finally(() => process.exit(0));
});
