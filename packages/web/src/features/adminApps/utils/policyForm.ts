import type { AdminApp } from '@gatehouse/contract';
import type { AppDefinition, Policy, PolicyRule } from '../api/getAdminApps';
import { parseLines, parseList } from './lines';
import { emptyOidcForm, formToOidc, oidcToForm, type OidcFormValues } from './oidcForm';

export { parseLines, parseList };

/** The kinds of rule, in the order the kind picker offers them. */
export const RULE_KINDS = ['anyUser', 'emails', 'domains', 'groups', 'roles', 'claim'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export const RULE_KIND_LABELS: Record<RuleKind, string> = {
  anyUser: 'Any signed-in user',
  emails: 'Emails',
  domains: 'Domains',
  groups: 'Groups',
  roles: 'Roles',
  claim: 'Claim equals',
};

export function isRuleKind(value: unknown): value is RuleKind {
  return typeof value === 'string' && (RULE_KINDS as readonly string[]).includes(value);
}

/** One rule as the editor holds it: the kind, a list typed as text, or a claim's name and value. */
export interface RuleFormValues {
  /** Stable React key for the row (not sent). */
  key: string;
  kind: RuleKind;
  /** For emails, domains, groups and roles: comma- or newline-separated. */
  values: string;
  claimName: string;
  claimValue: string;
}

/**
 * Who serves the app: Gatehouse, as its reverse proxy (to `upstream`), or a proxy of the operator's
 * (nginx, Caddy, Traefik) that asks Gatehouse about every request (forward-auth: no upstream).
 */
export type ServedBy = 'gatehouse' | 'proxy';

/** The whole app form: text as typed, switches, and the two rule lists. */
export interface AppFormValues {
  id: string;
  name: string;
  publicUrl: string;
  /** Gatehouse guards the app's host (as its reverse proxy, or answering its proxy's forward-auth checks). */
  guarded: boolean;
  /** The app signs people in with OpenID Connect, Gatehouse being its provider. */
  signsInWithOidc: boolean;
  /** Its settings (kept while the choice changes back and forth). */
  oidc: OidcFormValues;
  servedBy: ServedBy;
  /** Sent only when Gatehouse serves the app (kept while the choice changes back and forth). */
  upstream: string;
  /** One per line. */
  publicPaths: string;
  websockets: boolean;
  corsPreflight: boolean;
  preserveHost: boolean;
  /** The providers whose access token the app receives (ids; none by default). */
  passAccessToken: string[];
  compress: boolean;
  allow: RuleFormValues[];
  deny: RuleFormValues[];
}

let lastKey = 0;
const nextKey = () => `rule-${++lastKey}`;

export function newRule(kind: RuleKind = 'groups'): RuleFormValues {
  return { key: nextKey(), kind, values: '', claimName: '', claimValue: '' };
}

/** The kind of a rule from the server; an unknown shape reads as `undefined`. */
export function ruleKind(rule: PolicyRule): RuleKind | undefined {
  return RULE_KINDS.find((kind) => kind in rule);
}

export function ruleToForm(rule: PolicyRule): RuleFormValues {
  const form = newRule(ruleKind(rule) ?? 'anyUser');
  if (rule.claim) return { ...form, claimName: rule.claim.name, claimValue: String(rule.claim.value) };
  if (rule.emails) return { ...form, values: rule.emails.join(', ') };
  if (rule.domains) return { ...form, values: rule.domains.join(', ') };
  if (rule.groups) return { ...form, values: rule.groups.join(', ') };
  if (rule.roles) return { ...form, values: rule.roles.join(', ') };
  return form;
}

/** The rule the server expects: exactly one key. Empty lists are sent as typed, for the server to refuse. */
export function formToRule(form: RuleFormValues): PolicyRule {
  switch (form.kind) {
    case 'anyUser':
      return { anyUser: true };
    case 'claim':
      return { claim: { name: form.claimName.trim(), value: form.claimValue.trim() } };
    case 'emails':
      return { emails: parseList(form.values) };
    case 'domains':
      return { domains: parseList(form.values) };
    case 'groups':
      return { groups: parseList(form.values) };
    case 'roles':
      return { roles: parseList(form.values) };
  }
}

export function policyToForm(policy: Policy | undefined): Pick<AppFormValues, 'allow' | 'deny'> {
  return { allow: (policy?.allow ?? []).map(ruleToForm), deny: (policy?.deny ?? []).map(ruleToForm) };
}

export function formToPolicy(form: Pick<AppFormValues, 'allow' | 'deny'>): Policy {
  return { allow: form.allow.map(formToRule), deny: form.deny.map(formToRule) };
}

/** A new app: nothing typed, every switch off, no rules (nobody may open it until one is added). */
export function emptyAppForm(): AppFormValues {
  return {
    id: '',
    name: '',
    publicUrl: '',
    guarded: true,
    signsInWithOidc: false,
    oidc: emptyOidcForm(),
    servedBy: 'gatehouse',
    upstream: '',
    publicPaths: '',
    websockets: false,
    corsPreflight: false,
    preserveHost: false,
    passAccessToken: [],
    // Off unless the admin chooses it, knowing the risk (BREACH: the form says it).
    compress: false,
    allow: [],
    deny: [],
  };
}

export function appToForm(app: AdminApp | AppDefinition): AppFormValues {
  return {
    id: app.id,
    name: app.name,
    publicUrl: app.publicUrl,
    guarded: app.guard !== false,
    signsInWithOidc: app.oidc !== undefined,
    oidc: app.oidc ? oidcToForm(app.oidc, app.id) : emptyOidcForm(),
    servedBy: app.upstream === undefined ? 'proxy' : 'gatehouse',
    upstream: app.upstream ?? '',
    publicPaths: (app.publicPaths ?? []).join('\n'),
    websockets: Boolean(app.websockets),
    corsPreflight: Boolean(app.corsPreflight),
    preserveHost: Boolean(app.preserveHost),
    // A list of provider ids; anything else (an app saved when this was a switch) names none.
    passAccessToken: Array.isArray(app.passAccessToken) ? app.passAccessToken.filter((id): id is string => typeof id === 'string') : [],
    compress: app.compress === true,
    ...policyToForm(app.policy),
  };
}

/**
 * The definition to POST or PUT (never `source`); text is trimmed, validation is the server's. An app
 * its own proxy serves has no upstream at all; an app whose host Gatehouse does not guard has none of
 * the host's settings (what was typed for them is kept in the form, not sent).
 */
export function formToApp(form: AppFormValues): AppDefinition {
  const host = form.guarded
    ? {
        ...(form.servedBy === 'gatehouse' ? { upstream: form.upstream.trim() } : {}),
        publicPaths: parseLines(form.publicPaths),
        websockets: form.websockets,
        corsPreflight: form.corsPreflight,
        preserveHost: form.preserveHost,
        passAccessToken: form.passAccessToken,
        compress: form.compress,
      }
    : { publicPaths: [], websockets: false, corsPreflight: false, preserveHost: false, passAccessToken: [], compress: false };
  return {
    id: form.id.trim(),
    name: form.name.trim(),
    publicUrl: form.publicUrl.trim(),
    guard: form.guarded,
    ...host,
    ...(form.signsInWithOidc ? { oidc: formToOidc(form.oidc) } : {}),
    policy: formToPolicy(form),
  };
}

/** "name=value" lines (or commas) → `{ name: value }`, for the tester's typed-in claims. */
export function parseClaims(text: string): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const entry of parseList(text)) {
    const at = entry.indexOf('=');
    if (at <= 0) continue;
    const name = entry.slice(0, at).trim();
    if (name) claims[name] = entry.slice(at + 1).trim();
  }
  return claims;
}
