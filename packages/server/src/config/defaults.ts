import type { ConfigInput } from './schema.js';

/** The portal's port in the built-in defaults; the development services sit on the ports just above it. */
export const DEFAULT_PORT = 4180;

/**
 * What `npm start` runs with when there is no config file: the portal on localhost:4180, the built-in
 * development IdP on localhost:4181, a second one ("Partner IdP") on localhost:4183 to try linking and
 * several IdPs, the demo app on localhost:4182 (behind Gatehouse twice, and by itself as an OpenID
 * Connect client at 127.0.0.1:4182), and the metrics on 127.0.0.1:4189, all on loopback.
 *
 * A file that says `extends: development-defaults` (config/extendDefaults.ts) starts from these too,
 * laid out around its own `listen.port`: the development services keep their offsets from the portal's
 * port (+1, +2, +3, +9), the demo apps their `*.localhost` hosts on it, and the data goes to
 * ./data-<port>, so a second Gatehouse on another port brings development IdPs and a database of its
 * own, and its IdPs send people back to it, not to the first.
 */
export function developmentDefaults(port: number = DEFAULT_PORT): ConfigInput {
  return {
    mode: 'development',
    publicUrl: `http://localhost:${port}`,
    listen: { port },
    // Elsewhere than 4180, a Gatehouse of its own beside the default one: its own database and keys.
    ...(port === DEFAULT_PORT ? {} : { dataDir: `./data-${port}` }),
    // alice is an admin through her group `admins` at the Development IdP (that provider's only).
    admins: { groups: [{ provider: 'dev', group: 'admins' }] },
    development: {
      idps: [
        // The organisation's own IdP: its groups (staff, admins) count for policies and apps.
        { port: port + 1, providerId: 'dev', name: 'Development IdP', users: 'default', trustGroups: true },
        // A partner's (a contractor's) IdP: people may sign in, but its groups count for nothing.
        { port: port + 3, providerId: 'partner', name: 'Partner IdP', users: 'partner' },
      ],
      demoApp: { port: port + 2 },
    },
    // Prometheus metrics on a loopback port of their own, printed with the portal's URL at start.
    metrics: { listen: { host: '127.0.0.1', port: port + 9 } },
    // The demo app behind Gatehouse twice: for staff, and for admins only. Browsers resolve *.localhost
    // to loopback, so these hosts reach the portal's own port.
    apps: [
      {
        id: 'whoami',
        name: 'Whoami',
        publicUrl: `http://whoami.localhost:${port}`,
        upstream: `http://localhost:${port + 2}`,
        policy: { allow: [{ groups: ['staff'] }] },
        websockets: true,
        // The demo app reads its public origin from Host to check the assertion's audience.
        preserveHost: true,
      },
      {
        id: 'admin-demo',
        name: 'Admin demo',
        publicUrl: `http://admin-demo.localhost:${port}`,
        upstream: `http://localhost:${port + 2}`,
        policy: { allow: [{ groups: ['admins'] }] },
        websockets: true,
        preserveHost: true,
      },
      // The same demo app by itself, signing people in with OpenID Connect, Gatehouse being its OpenID
      // Provider ("Sign in with Gatehouse" on its home page). Its own origin is the loopback IP literal
      // (RFC 8252 §8.3): a host apart from the portal's "localhost", so the portal's cookies never reach
      // it, and one the portal reaches server to server for back-channel logout.
      {
        id: DEMO_OIDC_APP_ID,
        name: 'Demo (Sign in with Gatehouse)',
        publicUrl: `http://127.0.0.1:${port + 2}`,
        guard: false,
        policy: { allow: [{ groups: ['staff'] }] },
        oidc: {
          // A public client with PKCE: the demo runs on the person's own machine, and a secret would only
          // be one more value for two processes to share. PKCE binds each code to the demo's sign-in.
          authentication: 'none',
          redirectUris: [`http://127.0.0.1:${port + 2}/callback`],
          postLogoutRedirectUris: [`http://127.0.0.1:${port + 2}/signed-out`],
          // "Sign out everywhere" (and any end of the Gatehouse session) signs the person out of the demo too.
          backchannelLogoutUri: `http://127.0.0.1:${port + 2}/backchannel-logout`,
        },
      },
    ],
  };
}

/** The default app that is the demo app as an OpenID Connect client (devServices.ts configures the demo from it). */
export const DEMO_OIDC_APP_ID = 'demo-oidc';

/** The built-in defaults: the development defaults on port 4180. */
export const builtInDefaults: ConfigInput = developmentDefaults();

/** The development IdP's client registration; it is a loopback-only, development-mode-only secret. */
export const DEV_IDP_CLIENT_ID = 'gatehouse';
export const DEV_IDP_CLIENT_SECRET = 'gatehouse-dev-secret';
