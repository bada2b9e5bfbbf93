import { isLoopbackHost, routes } from '@gatehouse/contract';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { presetViews } from '../src/providers/providerPresets.js';
import { ConfigError, parseConfig } from '../src/config/load.js';
import { definitionToForm, formToProvider } from '../../web/src/features/adminProviders/utils/providerForm.js';

/**
 * One provider definition, three doors: a `providers:` entry in gatehouse.yaml, the console API's body
 * (POST /api/admin/providers, and PUT), and the console's form. All three read the contract's definition
 * (definitions/providers/), so each entry below is accepted by all of them, or refused by all of them
 * for the same field. A rule one door forgot would let through there what the others refuse.
 */
const base = { id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId: 'gatehouse', clientSecret: 'shh' };
const google = { id: 'google', name: 'Google', kind: 'google', clientId: 'gatehouse', clientSecret: 'shh' };
const entra = { id: 'entra', name: 'Entra ID', kind: 'entra', clientId: 'gatehouse', clientSecret: 'shh' };
const github = { id: 'github', name: 'GitHub', kind: 'github', clientId: 'gatehouse', clientSecret: 'shh' };

const cases: Array<[string, Record<string, unknown>, string | null]> = [
  ['a generic OpenID Connect provider', base, null],
  ['a choice of account prompt (a field the form has no input for)', { ...base, chooseAccountPrompt: 'login' }, null],
  ['an account prompt that is not one', { ...base, chooseAccountPrompt: 'never' }, 'chooseAccountPrompt'],
  // Threat: an issuer reached over plain http anywhere but this machine (its answers could be forged on the way).
  ['a plain http issuer off loopback', { ...base, issuer: 'http://sso.corp.example' }, 'issuer'],
  ['plain http to a loopback development IdP', { ...base, issuer: 'http://127.0.0.1:4181' }, null],
  ['no openid scope', { ...base, scopes: ['email', 'profile'] }, 'scopes'],
  ['an id that is no id', { ...base, id: 'Corp SSO' }, 'id'],
  ['an allowed domain that is no domain', { ...base, allowedDomains: ['not a domain'] }, 'allowedDomains'],
  // Threat: a prefixed group reading as a bare one (a prefix must end with ":" or "/").
  ['a group prefix without its separator', { ...base, groupPrefix: 'partner' }, 'groupPrefix'],
  ['a group prefix', { ...base, groupPrefix: 'partner:', trustGroups: false }, null],
  ['a private key method without a key', { ...base, clientSecret: undefined, clientAuthMethod: 'private_key_jwt' }, 'privateKey'],
  ['a kind that does not exist', { ...base, kind: 'saml' }, 'kind'],
  ['Google for a Workspace, linking by email', { ...google, hostedDomains: ['corp.example'], trustEmail: true }, null],
  // Threat: any Google account holding a verified address at your domain linking into its user.
  ['Google linking by email without hostedDomains', { ...google, trustEmail: true }, 'trustEmail'],
  ['one Entra ID tenant', { ...entra, tenant: '11111111-2222-3333-4444-555555555555' }, null],
  // Threat: any Entra ID tenant's people admitted because the operator named none.
  ['multi-tenant Entra ID naming no tenant', { ...entra, tenant: 'organizations' }, 'tenants'],
  ['GitHub Enterprise Server', { ...github, baseUrl: 'https://github.corp.example', allowedOrganizations: ['corp'] }, null],
  // Threat: account takeover by an address github.com once verified for someone who no longer holds it.
  ['github.com linking by email', { ...github, trustEmail: true }, 'trustEmail'],
  ['a Keycloak realm that is no realm name', { id: 'kc', name: 'Keycloak', kind: 'keycloak', baseUrl: 'https://sso.corp.example', realm: 'a realm', clientId: 'g', clientSecret: 's' }, 'realm'],
  ['an Okta issuer elsewhere than its domain', { id: 'okta', name: 'Okta', kind: 'okta', domain: 'corp.okta.com', issuer: 'https://evil.example', clientId: 'g', clientSecret: 's' }, 'issuer'],
];

/** The field a problem names: "providers[0].allowedDomains[0]: …" and "allowedDomains[0]: …" both name allowedDomains. */
const fieldOf = (problem: string) => /^(?:providers\[\d+\]\.)?([A-Za-z]+)/.exec(problem)?.[1];

function configFields(entry: Record<string, unknown>): string[] {
  try {
    parseConfig({ providers: [entry] }, { env: {}, cwd: '/srv/gatehouse' });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.filter((problem) => problem.startsWith('providers[')).map((problem) => fieldOf(problem)!);
  }
}

function bodyFields(route: typeof routes.admin.createProvider | typeof routes.admin.updateProvider, entry: Record<string, unknown>): string[] {
  return (route.body.safeParse(entry).error?.issues ?? []).map((issue) => String(issue.path[0] ?? '(root)'));
}

const presets = presetViews('https://auth.example.com');

function formFields(entry: Record<string, unknown>): string[] {
  const preset = presets.find((candidate) => candidate.kind === (entry.kind ?? 'oidc'));
  const { problems } = formToProvider(definitionToForm(entry, preset), undefined, preset);
  return problems.map((problem) => fieldOf(problem)!);
}

describe('a provider definition, at the three doors', () => {
  it.each(cases)('%s', (_name, given, refused) => {
    const entry = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
    const doors = {
      config: configFields(entry),
      create: bodyFields(routes.admin.createProvider, entry),
      update: bodyFields(routes.admin.updateProvider, entry),
      form: formFields(entry),
    };
    if (refused === null) {
      expect(doors).toEqual({ config: [], create: [], update: [], form: [] });
      return;
    }
    // An edit that leaves the credential out keeps the stored one: refused only if none is stored (the store's check).
    const kept = (refused === 'clientSecret' || refused === 'privateKey') && entry[refused] === undefined;
    for (const [door, fields] of Object.entries(doors)) {
      if (door === 'update' && kept) expect(fields, door).toEqual([]);
      else expect(fields, door).toContain(refused);
    }
  });

  it('an edit may leave out its id and credential (the route names one, the store keeps the other), and nothing else', () => {
    const { id: _id, clientSecret: _secret, ...edit } = base;
    expect(bodyFields(routes.admin.updateProvider, edit)).toEqual([]);
    expect(bodyFields(routes.admin.createProvider, edit)).toContain('id');
    expect(bodyFields(routes.admin.createProvider, { ...edit, id: 'corp' })).toEqual(['clientSecret']);
    expect(bodyFields(routes.admin.updateProvider, { ...edit, clientSecret: '' })).toEqual(['clientSecret']);
    expect(bodyFields(routes.admin.updateProvider, { ...edit, clientId: '' })).toEqual(['clientId']);
  });
});

describe('loopback, as the definition judges it in the server and the browser alike', () => {
  /** The rule as the server wrote it with Node's address parser, before the definition moved to the contract. */
  const withNode = (hostname: string) => {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost')) return true;
    if (isIP(host) === 4) return host.startsWith('127.');
    if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
    return false;
  };

  // Threat: plain http (or a test-only stand-in) let through for a host that only looks like loopback.
  it.each(['localhost', 'LOCALHOST', 'idp.localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1', '0:0:0:0:0:0:0:1', '127.0.0.1.evil.example', '127.example', '127.0.0.256', '127.00.0.1', '::ffff:127.0.0.1', '10.0.0.1', 'localhost.evil.example', '1270.0.0.1', ''])(
    '%s',
    (host) => expect(isLoopbackHost(host)).toBe(withNode(host)),
  );
});
