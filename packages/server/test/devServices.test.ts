import { describe, expect, it } from 'vitest';
import { builtInDefaults } from '../src/config/defaults.js';
import { parseConfig } from '../src/config/load.js';
import { demoOidcEnv, nextRestartDelay, RESTART_MAX_MS, RESTART_MIN_MS, STABLE_AFTER_MS } from '../src/devServices.js';

describe('development services: restart backoff', () => {
  it('waits 1 s after the first crash, doubling while the child keeps crashing, up to 30 s', () => {
    let delay: number | undefined;
    const delays: number[] = [];
    for (let crash = 0; crash < 7; crash += 1) {
      delay = nextRestartDelay(delay, 500);
      delays.push(delay);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(RESTART_MIN_MS).toBe(1_000);
    expect(RESTART_MAX_MS).toBe(30_000);
  });

  it('starts over at 1 s once the child stayed up long enough', () => {
    expect(nextRestartDelay(16_000, STABLE_AFTER_MS)).toBe(RESTART_MIN_MS);
    expect(nextRestartDelay(16_000, STABLE_AFTER_MS - 1)).toBe(30_000);
  });
});

describe('development services: the demo app as an OpenID Connect client', () => {
  it('hands the demo its issuer, client id, own origin and the guarded address, from the default apps', () => {
    const config = parseConfig(builtInDefaults, { env: {} });
    expect(demoOidcEnv(config, 4182, 'http://localhost:4180')).toEqual({
      DEMO_APP_OIDC_ISSUER: 'http://localhost:4180',
      DEMO_APP_OIDC_CLIENT_ID: 'demo-oidc',
      DEMO_APP_PUBLIC_URL: 'http://127.0.0.1:4182',
      DEMO_APP_GUARDED_URL: 'http://whoami.localhost:4180',
    });
    // The registration matches what the demo asks for: its callback, post-logout and back-channel paths.
    expect(config.apps.find((app) => app.id === 'demo-oidc')).toMatchObject({
      guard: false,
      oidc: {
        authentication: 'none',
        redirectUris: ['http://127.0.0.1:4182/callback'],
        postLogoutRedirectUris: ['http://127.0.0.1:4182/signed-out'],
        backchannelLogoutUri: 'http://127.0.0.1:4182/backchannel-logout',
      },
    });
  });

  it('leaves "Sign in with Gatehouse" off when the configuration has no such app', () => {
    const config = parseConfig(builtInDefaults, { env: {} });
    expect(demoOidcEnv({ ...config, apps: config.apps.filter((app) => app.id !== 'demo-oidc') }, 4182, 'http://localhost:4180')).toEqual({});
  });
});
