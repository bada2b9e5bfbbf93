import { emailDomainOf, type SignInRefusalReason } from '@gatehouse/contract';
import { CONSUMER_TENANT, isMultiTenant } from '@gatehouse/contract';
import type { ProviderConfig, ProviderKind } from '../config/schema.js';
import type { IdentityProfile } from './identityProfile.js';

/**
 * Admission: whether what an IdP says of a person passes the rules of who may sign in. One judge, used
 * wherever Gatehouse hears from an IdP or the rules change: a sign-in (signInRules.ts), linking, every
 * claims re-check of a live session, every change an operator makes to the rules (the console, a
 * reload) and at start. The invariant it keeps: every live session would be admitted now by a fresh
 * sign-in with what its IdP last said (docs/architecture.md, "Admission").
 *
 * Two sets of rules must both admit a person: the provider's own (allowedDomains, and its kind's:
 * Google's hostedDomains, Entra ID's tenants, GitHub's allowedOrganizations) and the organisation's, set
 * in the console for every provider at once (they only narrow). A pure function of what it is given.
 */

/** The organisation-wide rules (admin console, "Who may sign in"). */
export interface OrganizationRules {
  /** Email domains anyone must have, whatever the provider; empty means any domain. */
  allowedDomains: readonly string[];
  /** Whether people unknown to Gatehouse may get a user at all (each provider must allow it too). */
  createUsers: boolean;
}

/** The rules as they were before any were set: the providers' own decide alone. */
export const OPEN_ORGANIZATION: OrganizationRules = { allowedDomains: [], createUsers: true };

/** A kind's own admission rules, read only for that kind. */
export interface KindRules {
  /** Google: the Workspace domains whose accounts are admitted (the ID token's `hd`). */
  hostedDomains?: readonly string[];
  /** Entra ID: the tenant, and for a multi-tenant app the tenants admitted or any. */
  tenant?: string;
  tenants?: readonly string[];
  allowAnyTenant?: boolean;
  /** GitHub: the organisations one of which the person must be a member of. */
  allowedOrganizations?: readonly string[];
}

/** What admission reads of a provider. */
export type AdmissionProvider = Pick<ProviderConfig, 'name' | 'allowedDomains'> & { kind?: ProviderKind } & KindRules;

/** What admission reads of an IdP's answer (or of what an identity keeps of its last one). */
export type AdmissionProfile = Pick<IdentityProfile, 'email' | 'emailProblem' | 'emailUnverified' | 'emailVerified' | 'facts'>;

export interface AdmissionCase {
  provider: AdmissionProvider;
  organization: OrganizationRules;
  profile: AdmissionProfile;
}

/** A rule said no: the reason (a closed set, audited), a sentence for admins, and what the person's sentence names. */
export interface AdmissionRefusal {
  reason: SignInRefusalReason;
  /** For admins only: which rule said no, in words. People see the catalogue's sentence for the reason. */
  why: string;
  params: { email?: string; domain?: string };
}

/** Whether the person is admitted: undefined, or the first rule that refuses them. */
export function judgeAdmission(admission: AdmissionCase): AdmissionRefusal | undefined {
  return emailRefusal(admission) ?? domainRefusal(admission) ?? kindRefusal(admission);
}

/**
 * The email: present, well formed and verified by the IdP. An email the normaliser refused (too long,
 * several @, non-ASCII, ...) is no email: refused with the reason, never checked in a shortened or
 * case-folded form (the contract's definitions/email.ts). The value itself is not repeated: it is
 * whatever the IdP sent, and may be hostile.
 */
export function emailRefusal({ provider, profile }: AdmissionCase): AdmissionRefusal | undefined {
  const email = profile.email;
  if (!email && profile.emailProblem) return { reason: 'email_malformed', why: `the email ${provider.name} sent ${profile.emailProblem}`, params: {} };
  if (!email && profile.emailUnverified) return { reason: 'email_unverified', why: `${provider.name} has no verified primary email for this account`, params: {} };
  if (!email) return { reason: 'email_missing', why: `${provider.name} sent no email`, params: {} };
  if (!profile.emailVerified) return { reason: 'email_unverified', why: `${provider.name} did not say the email is verified`, params: { email } };
  return undefined;
}

/** The domain lists, the provider's and the organisation's: both must admit a (canonical, verified) email. */
export function domainRefusal({ provider, organization, profile }: AdmissionCase): AdmissionRefusal | undefined {
  if (!profile.email) return undefined;
  const email = profile.email;
  // `email` is canonical (exactly one @, a DNS name after it): its domain is what the mail system reads.
  const domain = emailDomainOf(email);
  if (provider.allowedDomains.length > 0 && !provider.allowedDomains.includes(domain)) {
    return { reason: 'domain_not_allowed_by_provider', why: `${domain} is not among ${provider.name}'s allowed domains`, params: { email, domain } };
  }
  if (organization.allowedDomains.length > 0 && !organization.allowedDomains.includes(domain)) {
    return { reason: 'domain_not_allowed_by_organization', why: `${domain} is not among the organisation's allowed domains`, params: { email, domain } };
  }
  return undefined;
}

/**
 * The kind's own rules, on the facts the IdP's answer carried (identityProfile.ts `AdmissionFacts`).
 * A fact that is missing never passes a rule that needs it.
 */
export function kindRefusal({ provider, profile }: AdmissionCase): AdmissionRefusal | undefined {
  const facts = profile.facts ?? {};
  const params = profile.email ? { email: profile.email } : {};
  switch (provider.kind) {
    case 'google': {
      const required = provider.hostedDomains ?? [];
      if (required.length === 0) return undefined;
      // Threat: a personal Gmail account (no hd) or another Workspace tenant (another hd).
      const hd = facts.hostedDomain;
      if (hd && required.includes(hd)) return undefined;
      return {
        reason: 'hosted_domain_not_allowed',
        why: hd ? `${provider.name}: its Google Workspace domain ${hd} is not one of this provider's hostedDomains` : `${provider.name}: it is not a Google Workspace account of an allowed domain (no hd claim)`,
        params,
      };
    }
    case 'entra': {
      const tid = facts.tenant;
      const tenant = provider.tenant ?? '';
      const refuse = (why: string): AdmissionRefusal => ({ reason: 'tenant_not_allowed', why: `${provider.name}: ${why}`, params });
      if (!tid) return refuse('the answer named no Entra ID tenant (tid)');
      if (!isMultiTenant({ tenant })) {
        // One tenant: the issuer already names it; where the tenant is given by id, the token's must be it.
        return GUID.test(tenant) && tid !== tenant ? refuse(`its Entra ID tenant ${tid} is not ${tenant}`) : undefined;
      }
      const listed = provider.tenants ?? [];
      if (listed.includes(tid)) return undefined;
      // Threat: with `common`, personal Microsoft accounts sign in from the consumer tenant; "any tenant"
      // means any organisation's, never them, unless the consumer tenant is listed by name.
      if (provider.allowAnyTenant && listed.length === 0 && tid !== CONSUMER_TENANT) return undefined;
      return refuse(tid === CONSUMER_TENANT ? 'it is a personal Microsoft account (the consumer tenant), which is admitted only when tenants lists it' : `its Entra ID tenant ${tid} is not one of this provider's tenants`);
    }
    case 'github': {
      const required = provider.allowedOrganizations ?? [];
      if (required.length === 0) return undefined;
      const organizations = facts.organizations ?? [];
      if (required.some((organization) => organizations.includes(organization))) return undefined;
      return { reason: 'organization_not_allowed', why: `${provider.name}: the account is a member of none of ${required.join(', ')}`, params };
    }
    default:
      return undefined;
  }
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
