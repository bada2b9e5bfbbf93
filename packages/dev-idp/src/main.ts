import { optionsFromEnv } from './optionsFromEnv.js';
import { startDevIdp } from './startDevIdp.js';

// CLI: `node packages/dev-idp/dist/main.js`, configured by DEV_IDP_* environment variables.
async function main(): Promise<void> {
  const options = optionsFromEnv(process.env);
  let idp;
  try {
    idp = await startDevIdp(options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(`dev-idp: port ${options.port} on ${options.host ?? 'localhost'} is already in use; set DEV_IDP_PORT to another port`);
      process.exit(1);
    }
    throw error;
  }
  console.log(`dev-idp listening on ${idp.issuer}`);

  const stop = () => {
    idp.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('dev-idp: failed to stop cleanly', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  // Configuration mistakes are reported as "dev-idp: …" sentences; anything else keeps its stack.
  const isConfigError = error instanceof Error && error.message.startsWith('dev-idp:');
  console.error(isConfigError ? error.message : error);
  process.exit(1);
});
