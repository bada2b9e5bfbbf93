import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/load.js';
import { configWarnings } from '../src/config/schema.js';

/**
 * How far an IdP is trusted for the addresses it asserts (config/providers/trust.ts): refused where it
 * can never be right, warned where it works but trusts an IdP for addresses it is no authority for, and
 * the settings made for tests refused in production.
 */
const secrets = { cookieKey: 'a'.repeat(44), encryptionKeys: [{ id: 'k1', key: Buffer.alloc(32, 1).toString('base64') }] };
const google = { kind: 'google', id: 'google', name: 'Google', clientId: 'c', clientSecret: 's' };
const github = { kind: 'github', id: 'github', name: 'GitHub', clientId: 'c', clientSecret: 's' };

function problems(providers: unknown[], extra: Record<string, unknown> = {}): string[] {
  try {
    parseConfig({ providers, ...extra }, { env: {} });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}
const warnings = (providers: unknown[]) => configWarnings(parseConfig({ providers }, { env: {} }));

describe('refused where it can never be right', () => {
  // Threat: account takeover by email through an IdP that is no authority for the address.
  it('trustEmail on github.com', () => {
    expect(problems([{ ...github, trustEmail: true }]).join()).toMatch(/trustEmail: cannot be right for github\.com/);
  });

  it('trustEmail on Google without hostedDomains', () => {
    expect(problems([{ ...google, trustEmail: true }]).join()).toMatch(/trustEmail: needs hostedDomains/);
    expect(problems([{ ...google, trustEmail: true, hostedDomains: ['example.com'] }])).toEqual([]);
  });
});

describe('warned where it works but trusts an IdP too far', () => {
  it('allowedDomains on Google without hostedDomains', () => {
    expect(warnings([{ ...google, allowedDomains: ['example.com'] }])).toEqual([expect.stringMatching(/^providers\[0\] \(google\)\.allowedDomains: Google vouches for an address/)]);
    expect(warnings([{ ...google, allowedDomains: ['example.com'], hostedDomains: ['example.com'] }])).toEqual([]);
  });

  it('allowedDomains on GitHub, and trustEmail on a GitHub Enterprise Server', () => {
    expect(warnings([{ ...github, allowedDomains: ['example.com'] }])).toEqual([expect.stringMatching(/allowedDomains: GitHub lets anyone verify/)]);
    expect(warnings([{ ...github, baseUrl: 'https://github.example.com', trustEmail: true }])).toEqual([expect.stringMatching(/trustEmail: a GitHub Enterprise Server decides/)]);
  });

  it('nothing to say of a plain provider', () => {
    expect(warnings([{ id: 'corp', name: 'Corp', issuer: 'https://idp.example.com', clientId: 'c', clientSecret: 's', allowedDomains: ['example.com'], trustEmail: true }])).toEqual([]);
  });
});

// Threat: a production deployment whose Microsoft or Google sign-ins go to a stand-in on the machine.
describe('settings for tests are refused in production', () => {
  const standIn = { kind: 'entra', id: 'entra', name: 'Entra', clientId: 'c', clientSecret: 's', tenant: '11111111-1111-4111-8111-111111111111', loopbackStandIn: 'http://127.0.0.1:9999' };
  const production = { mode: 'production', secrets };

  it('loopbackStandIn', () => {
    expect(problems([standIn])).toEqual([]);
    expect(problems([standIn], production).join()).toMatch(/providers\[0\]\.loopbackStandIn: is for tests only/);
  });

  it("a loopback issuer in place of a preset's own", () => {
    const overridden = { ...google, issuer: 'http://127.0.0.1:9999' };
    expect(problems([overridden])).toEqual([]);
    expect(problems([overridden], production).join()).toMatch(/providers\[0\]\.issuer: a loopback issuer in place of google's own is for tests only/);
    expect(problems([{ ...google, issuer: 'https://accounts.google.com' }], production)).toEqual([]);
  });
});
