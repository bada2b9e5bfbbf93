import type { SignInWithGatehouseOptions } from './rp/signInWithGatehouse.js';
import { startDemoApp } from './startDemoApp.js';

/**
 * "Sign in with Gatehouse" is on when the issuer, the client id and the demo's public URL are given
 * (DEMO_APP_OIDC_ISSUER, DEMO_APP_OIDC_CLIENT_ID, DEMO_APP_PUBLIC_URL); DEMO_APP_OIDC_CLIENT_SECRET for a
 * confidential client, DEMO_APP_GUARDED_URL for the home page's link to the guarded way.
 */
function oidcFromEnv(env: (name: string) => string | undefined): SignInWithGatehouseOptions | undefined {
  const issuer = env('DEMO_APP_OIDC_ISSUER');
  const clientId = env('DEMO_APP_OIDC_CLIENT_ID');
  const publicUrl = env('DEMO_APP_PUBLIC_URL');
  if (!issuer && !clientId && !publicUrl) return undefined;
  if (!issuer || !clientId || !publicUrl) {
    throw new Error('demo-app: set DEMO_APP_OIDC_ISSUER, DEMO_APP_OIDC_CLIENT_ID and DEMO_APP_PUBLIC_URL together, or none of them');
  }
  for (const [name, value] of [['DEMO_APP_OIDC_ISSUER', issuer], ['DEMO_APP_PUBLIC_URL', publicUrl]] as const) {
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new Error(`demo-app: ${name} must be an http(s) URL, got ${value}`);
  }
  const clientSecret = env('DEMO_APP_OIDC_CLIENT_SECRET');
  const guardedUrl = env('DEMO_APP_GUARDED_URL');
  return { issuer, clientId, publicUrl, ...(clientSecret ? { clientSecret } : {}), ...(guardedUrl ? { guardedUrl } : {}) };
}

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
      oidc: oidcFromEnv(env),
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
