import { startDemoApp } from './startDemoApp.js';

// CLI: `node packages/demo-app/dist/main.js`, configured by DEMO_APP_* environment variables.
async function main(): Promise<void> {
  // An empty variable (common in compose files and CI) means "not set".
  const env = (name: string) => process.env[name] || undefined;
  const port = Number(env('DEMO_APP_PORT') ?? 4182);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`demo-app: DEMO_APP_PORT must be a port number, got ${env('DEMO_APP_PORT')}`);
  }
  const host = env('DEMO_APP_HOST') ?? 'localhost';
  let app;
  try {
    app = await startDemoApp({
      port,
      host,
      jwksUrl: env('DEMO_APP_JWKS_URL'),
      issuer: env('DEMO_APP_ISSUER'),
      audience: env('DEMO_APP_AUDIENCE'),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`demo-app: port ${port} on ${host} is already in use; set DEMO_APP_PORT to another port`);
    }
    throw error;
  }
  console.log(`demo-app listening on ${app.url}`);

  const stop = () => {
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('demo-app: failed to stop cleanly', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  // Configuration mistakes are reported as "demo-app: …" sentences; anything else keeps its stack.
  const isConfigError = error instanceof Error && error.message.startsWith('demo-app:');
  console.error(isConfigError ? error.message : error);
  process.exit(1);
});
