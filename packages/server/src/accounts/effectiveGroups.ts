import type { ProviderConfig } from '../config/schema.js';
import type { IdentityClaims } from './accountStore.js';

/** What decides whether a provider's groups and other claims count: the provider's own settings. */
export type GroupTrust = Pick<ProviderConfig, 'id' | 'enabled' | 'trustGroups' | 'groupPrefix'> & { trustClaims?: boolean | undefined };

/** Looks up an enabled provider by id (the provider registry's `get`). */
export interface GroupTrustLookup {
  get(id: string): GroupTrust | undefined;
}

/** The groups one identity brings to a decision. */
export interface IdentityGroups {
  /** The provider the identity comes from, when it exists and is enabled (otherwise nothing counts). */
  providerId: string | undefined;
  /** The groups as the IdP last asserted them, while the provider is enabled: what `admins.groups` (which names its provider) reads. */
  asserted: readonly string[];
  /** The groups that count for policies, X-Gatehouse-Groups, the signed assertion and the launcher. */
  counted: readonly string[];
  /** The other claims that count for `claim:` policy rules (effectiveClaims). */
  claims: Readonly<Record<string, unknown>>;
}

const NONE: readonly string[] = Object.freeze([]);
const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The groups that count from one provider. Threat: any IdP can assert any group name, so a contractor
 * IdP (admitted by `allowedDomains`) asserting `admins` would otherwise open everything guarded by the
 * organisation's own `admins` group. So:
 * - a provider that is missing or turned off brings no groups;
 * - with a `groupPrefix`, its groups count only prefixed (`partner:staff`), never as bare names;
 * - without one, they count only when the provider is trusted for them (`trustGroups`);
 * - otherwise none count (fail closed: the default for every provider).
 */
export function effectiveGroups(provider: GroupTrust | undefined, asserted: readonly string[]): readonly string[] {
  if (!provider?.enabled || asserted.length === 0) return NONE;
  const prefix = provider.groupPrefix;
  if (prefix) return asserted.map((group) => prefix + group);
  return provider.trustGroups ? asserted : NONE;
}

/**
 * The claims that count from one provider for `claim:` policy rules, by the same trust as its groups.
 * Threat: an untrusted partner IdP asserting `department: finance` or `roles: [admin]` passing a rule
 * written for the organisation's own directory. So:
 * - a provider that is missing or turned off brings none;
 * - with a `groupPrefix`, its claims count only under prefixed names (`partner:department`);
 * - without one, only when it is trusted for them (`trustClaims`, else as `trustGroups` says);
 * - groups and emails never count as claims (they have checks of their own), whatever an old snapshot kept.
 */
export function effectiveClaims(provider: GroupTrust | undefined, asserted: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> {
  if (!provider?.enabled || !asserted) return NO_CLAIMS;
  const prefix = provider.groupPrefix;
  if (!prefix && !(provider.trustClaims ?? provider.trustGroups)) return NO_CLAIMS;
  const counted: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(asserted)) {
    if (name === 'groups' || name.toLowerCase().startsWith('email')) continue;
    counted[prefix ? prefix + name : name] = value;
  }
  return counted;
}

/**
 * The one place a session's (or an identity's) groups are computed for decisions: its provider's trust
 * settings, as the registry holds them now (a change in the console counts from the next decision on),
 * applied to the groups its IdP asserted.
 */
export function identityGroups(providers: GroupTrustLookup, identity: { provider_id: string }, claims: Pick<IdentityClaims, 'groups' | 'extra'>): IdentityGroups {
  const provider = providers.get(identity.provider_id);
  const enabled = provider?.enabled ? provider : undefined;
  return {
    providerId: enabled?.id,
    asserted: enabled ? claims.groups : NONE,
    counted: effectiveGroups(enabled, claims.groups),
    claims: effectiveClaims(enabled, claims.extra),
  };
}

/** `identityGroups` of a signed-in session: the identity it signed in with, and that identity's claims. */
export function sessionGroups(providers: GroupTrustLookup, current: { identity: { provider_id: string }; claims: Pick<IdentityClaims, 'groups' | 'extra'> }): IdentityGroups {
  return identityGroups(providers, current.identity, current.claims);
}
