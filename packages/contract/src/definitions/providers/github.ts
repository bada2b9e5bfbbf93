import { z } from 'zod';
import { baseUrl, claimMapping, commonFields, groupPrefix, scopesWith, withCreateUsers, type privateKeyJwk } from './common.js';
import type { ProviderKindPreset } from './preset.js';

/** The prefix GitHub's groups count under unless another is chosen (never none). */
export const GITHUB_GROUP_PREFIX = 'github:';

/** Scopes that let a token read the person's organisations and teams (GitHub: "Scopes for OAuth apps"). */
const ORG_SCOPES = ['read:org', 'write:org', 'admin:org', 'user'];
/** Scopes that let a token read /user/emails. */
const EMAIL_SCOPES = ['user:email', 'user'];

/** An organisation's login: GitHub's own rule (letters, digits, single hyphens), compared lowercased as GitHub does. */
const organizationLogin = z
  .string()
  .regex(/^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$/, 'is not a GitHub organisation login')
  .transform((login) => login.toLowerCase());

/**
 * GitHub (github.com, GitHub Enterprise Cloud with data residency, or GitHub Enterprise Server at
 * `baseUrl`) through an OAuth app: OAuth 2.0, not OpenID Connect. Who signed in comes from its REST API;
 * organisations and teams become groups (`org`, `org/team`).
 *
 * It has no `issuer` of its own: the identities it creates live in the namespace of its web origin
 * (`https://github.com` or `baseUrl`), which is what it normalises `issuer` to.
 */
export const githubProviderSchema = z
  .object({
    ...commonFields,
    kind: z.literal('github'),
    /** GitHub Enterprise Server (or a GHE.com subdomain): its web address. Left out: github.com. */
    baseUrl: baseUrl.optional(),
    /** The REST API's root, only when it is not where GitHub keeps it for `baseUrl` (see the server's providers/kinds/githubApi.ts). */
    apiUrl: baseUrl.optional(),
    scopes: scopesWith(['read:user', 'user:email', 'read:org']),
    /**
     * Threat: GitHub organisation names are anyone's to register (a free organisation can be named like
     * an Entra group id, or `platform-admins`), so its groups count only prefixed: `github:acme`,
     * `github:acme/platform`. Another prefix may be chosen; bare names, never.
     */
    groupPrefix: groupPrefix.default(GITHUB_GROUP_PREFIX),
    /**
     * Only members of one of these organisations may sign in (and stay signed in: checked again at every
     * claims refresh). Empty: any GitHub account the sign-in rules admit.
     */
    allowedOrganizations: z.array(organizationLogin).default([]),
    /** Accepted only as what it is derived to (a definition saved by the console repeats it). */
    issuer: z.string().optional(),
  })
  .strict()
  .superRefine((provider, ctx) => {
    if (!provider.clientSecret) {
      ctx.addIssue({ code: 'custom', path: ['clientSecret'], message: "is required: the OAuth app's client secret" });
    }
    if (!provider.scopes.some((scope) => EMAIL_SCOPES.includes(scope))) {
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must include "user:email": the verified primary email is read from /user/emails' });
    }
    if (provider.allowedOrganizations.length > 0 && !provider.scopes.some((scope) => ORG_SCOPES.includes(scope))) {
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must include "read:org" for allowedOrganizations: organisations are read from /user/orgs' });
    }
    if (provider.assumeEmailVerified) {
      ctx.addIssue({ code: 'custom', path: ['assumeEmailVerified'], message: 'does not apply: GitHub says itself whether an email is verified' });
    }
    // Threat: account takeover by email. github.com lets anyone verify any address they can receive mail
    // at, once, and keeps it verified after they lose it: it is no authority for an organisation's
    // addresses, and linking by them would hand an account to whoever held the address once.
    if (provider.trustEmail && provider.baseUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['trustEmail'],
        message: "cannot be right for github.com: GitHub is no authority for your domain's addresses (anyone can verify an address they once received mail at); people link GitHub from their account page instead",
      });
    }
    if (provider.issuer !== undefined && provider.issuer !== githubIssuer(provider.baseUrl)) {
      ctx.addIssue({ code: 'custom', path: ['issuer'], message: `is derived from baseUrl (${githubIssuer(provider.baseUrl)}): leave it out` });
    }
  })
  .transform(normalise);

/**
 * What every kind has, fixed for GitHub: it takes the client secret in the token request's body, has
 * no PAR and no private key, says itself whether an email is verified, and its runtime maps its profile.
 */
export interface GitHubFixed {
  issuer: string;
  /** Organisations and teams are read when a scope allows it. */
  readsGroups: boolean;
  clientAuthMethod: 'client_secret_post';
  privateKey?: z.output<typeof privateKeyJwk> | undefined;
  pushedAuthorizationRequests: 'never';
  assumeEmailVerified: false;
  claims: z.output<typeof claimMapping>;
  createUsers: boolean;
}

function normalise<P extends { baseUrl?: string | undefined; scopes: string[]; allowedDomains: string[]; createUsers?: boolean | undefined; issuer?: string | undefined }>(
  provider: P,
): Omit<P, keyof GitHubFixed> & GitHubFixed {
  return withCreateUsers({
    ...provider,
    issuer: githubIssuer(provider.baseUrl),
    readsGroups: provider.scopes.some((scope) => ORG_SCOPES.includes(scope)),
    clientAuthMethod: 'client_secret_post' as const,
    pushedAuthorizationRequests: 'never' as const,
    assumeEmailVerified: false as const,
    claims: claimMapping.parse({}),
  });
}

/** The namespace a GitHub's user ids live in: its web origin. */
export function githubIssuer(base: string | undefined): string {
  return base ?? 'https://github.com';
}

export const githubPreset: ProviderKindPreset = {
  kind: 'github',
  protocol: 'oauth2',
  label: 'GitHub',
  description: 'GitHub or GitHub Enterprise Server, through an OAuth app; organisations and teams as groups.',
  docs: 'docs/providers/github.md',
  fields: [
    { name: 'baseUrl', label: 'GitHub Enterprise Server URL', help: 'Leave empty for github.com.', type: 'url', required: false, placeholder: 'https://github.example.com' },
    { name: 'allowedOrganizations', label: 'Allowed organisations', help: 'Only members of these organisations may sign in. Empty: anyone the sign-in rules admit.', type: 'list', required: false },
  ],
  defaults: { scopes: ['read:user', 'user:email', 'read:org'], groupPrefix: GITHUB_GROUP_PREFIX },
};

/**
 * What the console stores of a GitHub provider: its definition as written, without what the schema
 * derives (issuer, readsGroups, the fixed client authentication, PAR and claim mapping), which a
 * providers: entry may not name — so the stored definition validates again when it is loaded.
 */
export function githubDefinition<P extends Partial<GitHubFixed>>(provider: P): Omit<P, Exclude<keyof GitHubFixed, 'createUsers' | 'privateKey'>> {
  const { issuer: _issuer, readsGroups: _reads, clientAuthMethod: _method, pushedAuthorizationRequests: _par, assumeEmailVerified: _assume, claims: _claims, ...definition } = provider;
  return definition;
}
