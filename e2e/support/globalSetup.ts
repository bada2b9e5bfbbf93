import { startStack } from './stack.js';

/** One stack for the whole run; its URLs reach the tests through the environment. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const stack = await startStack();
  process.env.GATEHOUSE_URL = stack.portalUrl;
  process.env.DEV_IDP_URL = stack.idpUrl;
  process.env.PARTNER_IDP_URL = stack.partnerIdpUrl;
  process.env.DEMO_APP_URL = stack.demoUrl;
  // Not GATEHOUSE_DATA_DIR: the Gatehouses that specs start themselves would read it as their own data folder.
  process.env.E2E_STACK_DATA_DIR = stack.dataDir;
  return () => stack.stop();
}
