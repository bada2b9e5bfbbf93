import type { ConfigInput } from './schema.js';

/**
 * What `npm start` runs with when there is no config file: the portal on localhost:4180, the built-in
 * development IdP on localhost:4181, a second one ("Partner IdP") on localhost:4183 to try linking and
 * several IdPs, the demo app on localhost:4182, and the metrics on 127.0.0.1:4189, all on loopback.
 */
export const builtInDefaults: ConfigInput = {
  mode: 'development',
  // alice is an admin through her group `admins` at the Development IdP (that provider's only).
  admins: { groups: [{ provider: 'dev', group: 'admins' }] },
  development: {
    idps: [
      // The organisation's own IdP: its groups (staff, admins) count for policies and apps.
      { port: 4181, providerId: 'dev', name: 'Development IdP', users: 'default', trustGroups: true },
      // A partner's (a contractor's) IdP: people may sign in, but its groups count for nothing.
      { port: 4183, providerId: 'partner', name: 'Partner IdP', users: 'partner' },
    ],
    demoApp: { port: 4182 },
  },
  // Prometheus metrics on a loopback port of their own, printed with the portal's URL at start.
  metrics: { listen: { host: '127.0.0.1', port: 4189 } },
  // The demo app behind Gatehouse twice: for staff, and for admins only. Browsers resolve *.localhost
  // to loopback, so these hosts reach the portal's own port.
  apps: [
    {
      id: 'whoami',
      name: 'Whoami',
      publicUrl: 'http://whoami.localhost:4180',
      upstream: 'http://localhost:4182',
      policy: { allow: [{ groups: ['staff'] }] },
      websockets: true,
      // The demo app reads its public origin from Host to check the assertion's audience.
      preserveHost: true,
    },
    {
      id: 'admin-demo',
      name: 'Admin demo',
      publicUrl: 'http://admin-demo.localhost:4180',
      upstream: 'http://localhost:4182',
      policy: { allow: [{ groups: ['admins'] }] },
      websockets: true,
      preserveHost: true,
    },
  ],
};

/** The development IdP's client registration; it is a loopback-only, development-mode-only secret. */
export const DEV_IDP_CLIENT_ID = 'gatehouse';
export const DEV_IDP_CLIENT_SECRET = 'gatehouse-dev-secret';
