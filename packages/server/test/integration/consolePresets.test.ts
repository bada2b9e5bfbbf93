import type { ProviderPreset } from '@gatehouse/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerPresets } from '@gatehouse/contract';
import { ScriptedBrowser, signedInThroughDevIdp } from './support/browser.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { startGitHubStandIn, type GitHubStandIn } from './support/githubStandIn.js';
import { startPresetIdp, type PresetIdp } from './support/presetIdp.js';

/**
 * "Providers added from the console with each preset" (issue #17): an admin reads the presets from
 * `GET /api/admin/provider-presets`, creates one provider of every kind through the admin API as the
 * console's form sends it, and a person signs in with each. The IdPs that cannot be reached from here
 * (Google, Entra, Okta, Auth0, GitLab, Keycloak, GitHub) are loopback stand-ins answering as those
 * providers do; the admin is signed in through the real development IdP.
 */
const CLIENT_ID = 'gatehouse-console';
const TENANT = '22222222-2222-4222-8222-222222222222';

let dev: DevIdpProcess;
let standIn: PresetIdp;
let keycloak: PresetIdp;
let entra: PresetIdp;
let github: GitHubStandIn;
let gatehouse: RunningGatehouse;
let portal: string;
let admin: { browser: ScriptedBrowser; csrf: string };

beforeAll(async () => {
  const port = await freePort();
  portal = `http://localhost:${port}`;
  [dev, standIn, keycloak, entra, github] = await Promise.all([
    startDevIdpProcess({ redirectUris: [`${portal}/.gatehouse/callback/dev`], postLogoutRedirectUris: [`${portal}/signed-out`] }),
    startPresetIdp({ clientId: CLIENT_ID }),
    // Keycloak's issuer is its realm's URL.
    startPresetIdp({ clientId: CLIENT_ID, issuer: (origin) => `${origin}/realms/staff` }),
    startPresetIdp({ clientId: CLIENT_ID, issuer: () => 'https://login.microsoftonline.com/{tenantid}/v2.0', servedAs: 'https://login.microsoftonline.com', userinfo: false }),
    startGitHubStandIn('ghes'),
  ]);
  gatehouse = await startGatehouse({
    port,
    admins: { groups: [{ provider: 'dev', group: 'admins' }] },
    providers: [{ id: 'dev', name: 'Development IdP', issuer: dev.issuer, clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret', createUsers: true, trustGroups: true, scopes: ['openid', 'email', 'profile', 'groups'] }],
  });
  // alice is an admin (the dev IdP's admins group).
  admin = await signedInThroughDevIdp(portal, 'alice@example.com', 'alice');
});

afterAll(async () => {
  await gatehouse?.close();
  await Promise.all([dev?.close(), standIn?.close(), keycloak?.close(), entra?.close(), github?.close()]);
});

const send = (method: string, path: string, body?: unknown) =>
  admin.browser.request(`${portal}${path}`, {
    method,
    headers: { origin: portal, 'x-csrf-token': admin.csrf, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

/** The console's "Test sign-in" with a provider, through the IdP (the stand-ins answer at once): its result. */
async function testSignIn(providerId: string): Promise<Record<string, unknown>> {
  const start = await admin.browser.request(`${portal}/.gatehouse/test-sign-in/${providerId}`, { form: { csrf_token: admin.csrf }, headers: { origin: portal } });
  expect(start.status, start.body).toBe(303);
  const { stoppedAt } = await admin.browser.follow(start, (url) => url.origin === portal && url.pathname.startsWith('/admin/'));
  const match = /^\/admin\/providers\/([^/]+)\/tests\/([^/]+)$/.exec(stoppedAt?.pathname ?? '');
  expect(match, `the test's result page, not ${stoppedAt?.href}`).not.toBeNull();
  return JSON.parse((await admin.browser.request(`${portal}/api/admin/providers/${match![1]}/tests/${match![2]}`)).body);
}

/** Where each kind is reached here, and the values of its required fields an admin would type. */
function definitionFor(preset: ProviderPreset): Record<string, unknown> {
  const common = {
    kind: preset.kind,
    id: `console-${preset.kind}`,
    name: `${preset.label} (console)`,
    clientId: CLIENT_ID,
    clientSecret: 'console-secret',
    scopes: preset.defaults.scopes,
    // As the form sends it: a claim mapping only for the kinds that have one (GitHub has none).
    ...(preset.defaults.claims ? { claims: preset.defaults.claims } : {}),
    createUsers: true,
  };
  switch (preset.kind) {
    case 'github':
      // GitHub Enterprise Server's layout: the web and the API under one base URL.
      return { ...common, clientId: github.clientId, clientSecret: github.clientSecret, baseUrl: github.webBase };
    case 'keycloak':
      return { ...common, baseUrl: keycloak.origin, realm: 'staff' };
    case 'entra':
      return { ...common, tenant: 'organizations', tenants: [TENANT], loopbackStandIn: entra.origin };
    case 'gitlab':
      return { ...common, baseUrl: standIn.origin };
    default: {
      // Required text fields get a plausible value; the issuer, derived or typed, is the stand-in's.
      const required = preset.fields.filter((field) => field.required && field.name !== 'issuer');
      return { ...common, ...Object.fromEntries(required.map((field) => [field.name, field.placeholder ?? 'example'])), issuer: standIn.origin };
    }
  }
}

describe('the console’s presets', () => {
  it('lists every preset the configuration knows, from the same definitions, with its fields and redirect URI', async () => {
    const answer = await admin.browser.request(`${portal}/api/admin/provider-presets`);
    expect(answer.status).toBe(200);
    const { presets } = JSON.parse(answer.body) as { presets: ProviderPreset[] };
    // One source of truth: the kinds a providers: entry may name, in the same order, the generic first.
    expect(presets.map((preset) => preset.kind)).toEqual(providerPresets.map((preset) => preset.kind));
    expect(presets[0]!.kind).toBe('oidc');
    for (const preset of presets) {
      expect(preset.label.length).toBeGreaterThan(0);
      expect(preset.docs).toMatch(/^(docs\/|https:\/\/)/);
      expect(preset.redirectUriPattern).toBe(`${portal}/.gatehouse/callback/{id}`);
      // OpenID Connect kinds ask for openid and map claims; GitHub (OAuth 2.0 and a REST API) does neither.
      if (preset.protocol === 'oidc') {
        expect(preset.defaults.scopes).toContain('openid');
        expect(preset.defaults.claims?.email.length).toBeGreaterThan(0);
      } else expect(preset.defaults.scopes).not.toContain('openid');
    }
    const google = presets.find((preset) => preset.kind === 'google');
    if (google) expect(google.fields.find((field) => field.name === 'hostedDomains')).toMatchObject({ input: 'list', required: false, default: null });
  });

  // Threat: the presets reveal how sign-in is set up; they are for admins only.
  it('is for admins only', async () => {
    expect((await new ScriptedBrowser().request(`${portal}/api/admin/provider-presets`)).status).toBe(401);
  });

  /** Every kind, each saved only once its own runtime prepared it (providers/providerStore.ts). */
  const fromConsole = providerPresets.map((preset) => preset.kind);

  it.each(fromConsole.map((kind) => [kind]))('a %s provider created from the console signs a person in', async (kind) => {
    const { presets } = JSON.parse((await admin.browser.request(`${portal}/api/admin/provider-presets`)).body) as { presets: ProviderPreset[] };
    const preset = presets.find((candidate) => candidate.kind === kind)!;
    const definition = definitionFor(preset);
    const created = await send('POST', '/api/admin/providers', definition);
    expect(created.status, created.body).toBe(201);
    const view = JSON.parse(created.body);
    expect(view).toMatchObject({ id: definition.id, kind, source: 'console', redirectUri: `${portal}/.gatehouse/callback/${definition.id}` });
    expect(created.body).not.toContain('console-secret');
    // The kind's own fields come back, so the console's edit form keeps them.
    for (const field of preset.fields.filter((field) => field.name !== 'issuer' && definition[field.name] !== undefined)) {
      expect(view.options[field.name]).toEqual(definition[field.name]);
    }

    const person = `p-${kind}`;
    if (kind === 'github') {
      github.addUser({ login: person, name: 'Pat', orgs: ['Acme'], teams: [{ org: 'Acme', slug: 'platform' }] });
      github.signInAs = person;
    } else {
      const idp = kind === 'keycloak' ? keycloak : kind === 'entra' ? entra : standIn;
      idp.claims =
      kind === 'entra'
        ? { sub: person, oid: person, tid: TENANT, email: `${person}@contoso.example`, xms_edov: true, name: 'Pat' }
        : { sub: person, email: `${person}@example.com`, email_verified: true, name: 'Pat' };
    }
    // The console's "Test sign-in" first: the kind's own runtime verifies the answer, and nothing is created.
    const tested = await testSignIn(String(definition.id));
    expect(tested, `testing ${kind}`).toMatchObject({ provider: { id: definition.id }, result: 'create', profile: { emailVerified: true, name: 'Pat' } });
    if (kind === 'github') expect(tested.profile).toMatchObject({ email: `${person}@example.com`, groups: ['acme', 'acme/platform'] });

    const browser = new ScriptedBrowser();
    await browser.follow(await browser.request(`${portal}/.gatehouse/sign-in/${definition.id}`, { headers: { accept: 'text/html' } }));
    const session = await browser.request(`${portal}/api/session`);
    expect(session.status, `signing in with ${kind}`).toBe(200);
    expect(JSON.parse(session.body).session.provider).toEqual({ id: definition.id, name: definition.name });

    // Edited from the console, it keeps its kind.
    const { clientSecret: _kept, kind: _kind, ...unchanged } = definition;
    const updated = await send('PUT', `/api/admin/providers/${definition.id}`, { ...unchanged, kind, name: `${preset.label} (renamed)` });
    expect(updated.status, updated.body).toBe(200);
    expect(JSON.parse(updated.body)).toMatchObject({ kind, name: `${preset.label} (renamed)` });
  });

  it('a test sign-in names the GitHub organisation rule that refuses a person', async () => {
    github.addUser({ login: 'outsider', name: 'Out Sider', orgs: ['elsewhere'] });
    github.signInAs = 'outsider';
    const { presets } = JSON.parse((await admin.browser.request(`${portal}/api/admin/provider-presets`)).body) as { presets: ProviderPreset[] };
    const definition = { ...definitionFor(presets.find((preset) => preset.kind === 'github')!), id: 'console-github-acme', name: 'GitHub (Acme only)', allowedOrganizations: ['acme'] };
    const created = await send('POST', '/api/admin/providers', definition);
    expect(created.status, created.body).toBe(201);
    // The kind's own rule is one of the sign-in rules (accounts/admission.ts): the IdP answered, and the
    // rules refuse this person, with the rule's reason.
    expect(await testSignIn(definition.id)).toMatchObject({ result: 'refused', code: 'sign_in_not_allowed', reason: 'organization_not_allowed', why: expect.stringContaining('acme') });
    // A member of the organisation passes the same test.
    github.signInAs = 'octocat';
    expect(await testSignIn(definition.id)).toMatchObject({ result: 'create', profile: { groups: ['acme', 'acme/platform'] } });
  });
});
