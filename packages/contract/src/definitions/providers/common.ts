import { emailDomainSchema } from '../email.js';
import { idSchema } from '../ids.js';
import { httpUrl, isLoopbackHost, parsedUrl } from '../urls.js';
import { z } from 'zod';

/**
 * What every provider, whatever its kind, has in common: the fields the sign-in rules, the admin role,
 * group trust, the console and the stores read. Each kind (providers/<kind>.ts beside this file) adds its
 * own options to these and normalises to one `ProviderConfig` (providers/index.ts).
 */

export const claimMapping = z
  .object({
    email: z.string().min(1).default('email'),
    emailVerified: z.string().min(1).default('email_verified'),
    name: z.string().min(1).default('name'),
    picture: z.string().min(1).default('picture'),
    groups: z.string().min(1).default('groups'),
  })
  .strict();

/** The claim mapping with a preset's own defaults (Auth0's namespaced groups claim, ...): what a file says wins. */
export function claimMappingWith(defaults: Partial<z.input<typeof claimMapping>> = {}) {
  return z.preprocess((value) => (value === undefined ? defaults : typeof value === 'object' && value !== null ? { ...defaults, ...value } : value), claimMapping);
}

/**
 * A group prefix: printable ASCII without spaces or commas (X-Gatehouse-Groups is a comma-separated
 * list), ending with ":" or "/", so a prefixed group can never read as a bare one or as another prefix.
 */
export const groupPrefix = z
  .string()
  .regex(/^[\x21-\x2b\x2d-\x7e]{1,63}[:/]$/, 'must be 2-64 printable ASCII characters without spaces or commas, ending with ":" or "/" (e.g. "partner:")');

export const privateKeyJwk = z
  .object({ kty: z.enum(['RSA', 'EC', 'OKP']), d: z.string().min(1), kid: z.string().optional(), alg: z.string().optional() })
  .loose();

/** An OpenID Connect issuer: https, or plain http to a loopback development IdP; no query or fragment. */
export const issuerUrl = httpUrl.superRefine((value, ctx) => {
  const issuer = parsedUrl(value);
  if (issuer && issuer.protocol === 'http:' && !isLoopbackHost(issuer.hostname)) {
    ctx.addIssue({ code: 'custom', message: 'must be https (plain http is accepted only for loopback development IdPs)' });
  }
  if (issuer && (issuer.search || issuer.hash)) {
    ctx.addIssue({ code: 'custom', message: 'must not have a query or fragment' });
  }
});

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'is not a valid scope token');

/** The scopes asked for, with a kind's own default. */
export function scopesWith(defaults: string[]) {
  return z.array(scopeToken).default(defaults);
}

/** The fields every provider has, whatever protocol it speaks. */
export const commonFields = {
  id: idSchema,
  name: z.string().min(1).max(80),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1, 'must not be empty').optional(),
  /** Allowed email domains for this provider; empty means any domain. */
  allowedDomains: z.array(emailDomainSchema).default([]),
  /** Whether a person unknown to Gatehouse gets a user on first sign-in. */
  createUsers: z.boolean().optional(),
  /** May a new identity link to an existing user by verified email? */
  trustEmail: z.boolean().default(false),
  /** Some IdPs (Entra ID) never send email_verified: only then may an operator vouch for them. */
  assumeEmailVerified: z.boolean().default(false),
  /**
   * Whether this provider's groups count for decisions (policies, the admin role, what apps receive).
   * Off by default: any IdP can assert any group name, so a contractor's IdP asserting `admins` must
   * not open what the organisation's own IdP guards with that name (see accounts/effectiveGroups.ts).
   */
  trustGroups: z.boolean().default(false),
  /** When set, this provider's groups count only as `<prefix><group>` (e.g. `partner:staff`), trusted or not. */
  groupPrefix: groupPrefix.optional(),
  /**
   * Whether this provider's other claims (`department`, `roles`, ...) count for `claim:` policy rules.
   * Unset: as trustGroups says. With a groupPrefix they count only under prefixed names
   * (`partner:department`), trusted or not (see accounts/effectiveGroups.ts).
   */
  trustClaims: z.boolean().optional(),
  /** Extra authorization request parameters (e.g. prompt, hd, domain_hint). */
  authorizationParams: z.record(z.string(), z.string()).default({}),
  /**
   * How "Switch account" asks this IdP to let the person choose: its account chooser (`select_account`)
   * or a fresh login (`login`). Unset: the kind's (the server's providers/kinds/: Google, Entra ID and GitHub
   * have a chooser; an OpenID Provider, when its discovery lists `select_account`, else `login`).
   */
  chooseAccountPrompt: z.enum(['select_account', 'login']).optional(),
  enabled: z.boolean().default(true),
};

/** How Gatehouse authenticates itself as the client at the token endpoint. */
export const clientAuthMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type ClientAuthMethod = (typeof clientAuthMethods)[number];
/** Pushed authorization requests: "auto" uses PAR when the IdP advertises it. */
export const parModes = ['auto', 'always', 'never'] as const;
export type ParMode = (typeof parModes)[number];

/** The fields of every OpenID Connect provider (the generic one and each preset), without `kind` and `issuer`. */
export const oidcFields = {
  ...commonFields,
  privateKey: privateKeyJwk.optional(),
  clientAuthMethod: z.enum(clientAuthMethods).default('client_secret_basic'),
  scopes: scopesWith(['openid', 'email', 'profile']),
  claims: claimMappingWith(),
  pushedAuthorizationRequests: z.enum(parModes).default('auto'),
};

type OidcChecked = {
  scopes: string[];
  clientAuthMethod: ClientAuthMethod;
  clientSecret?: string | undefined;
  privateKey?: unknown;
};

/** The rules every OpenID Connect provider's definition follows: openid asked for, the credential its method needs. */
export function checkOidc(provider: OidcChecked, ctx: z.RefinementCtx): void {
  if (!provider.scopes.includes('openid')) {
    ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'must include "openid"' });
  }
  if (provider.clientAuthMethod === 'private_key_jwt') {
    if (!provider.privateKey) {
      ctx.addIssue({ code: 'custom', path: ['privateKey'], message: 'is required for private_key_jwt (a private JWK)' });
    }
  } else if (!provider.clientSecret) {
    ctx.addIssue({ code: 'custom', path: ['clientSecret'], message: `is required for ${provider.clientAuthMethod}` });
  }
}

/**
 * Public IdPs (Google, GitHub, ...) admit the whole world: without a domain list, nobody unknown is
 * created unless the operator says so explicitly.
 */
export function withCreateUsers<P extends { createUsers?: boolean | undefined; allowedDomains: string[] }>(provider: P): P & { createUsers: boolean } {
  return { ...provider, createUsers: provider.createUsers ?? provider.allowedDomains.length > 0 };
}

/**
 * A preset's issuer is derived from its options (Google's is fixed, Keycloak's is baseUrl + realm):
 * `issuer` may still be given, but only as that very issuer (a definition saved by the console says it)
 * or as a loopback URL — the stand-in IdP a test runs. Nothing else: a preset named "google" pointing
 * anywhere but Google would make its checks (hd, ...) a lie.
 */
export const issuerOverride = issuerUrl.optional();

export function checkIssuerOverride(given: string | undefined, derived: string, ctx: z.RefinementCtx, { loopback = true } = {}): void {
  if (given === undefined || sameIssuer(given, derived)) return;
  const url = parsedUrl(given);
  if (loopback && url && isLoopbackHost(url.hostname)) return;
  ctx.addIssue({ code: 'custom', path: ['issuer'], message: `is derived from this kind's options (${derived}): leave it out` });
}

function sameIssuer(a: string, b: string): boolean {
  return a === b;
}

/** An http(s) URL: https, or http to loopback. */
export const httpsOrLoopback = issuerUrl;

/** A base URL (a self-managed GitLab, a Keycloak): https (http only on loopback), no query or fragment; trailing "/" dropped. */
export const baseUrl = issuerUrl.transform((value) => value.replace(/\/+$/, ''));
