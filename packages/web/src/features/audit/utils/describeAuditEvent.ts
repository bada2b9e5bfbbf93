import { isAuditEventType, type AuditEvent, type AuditEventType } from '@gatehouse/contract';
import { signInRefusalLabel } from '../../../lib/signInRefusals';

type Details = Record<string, unknown>;

/**
 * Each type the server records, in the console's words (the audit table, the filter's choices): a type
 * added to the contract without words here does not compile.
 */
export const AUDIT_EVENT_LABELS: Record<AuditEventType, string> = {
  sign_in: 'Sign-in',
  sign_in_failed: 'Failed sign-in',
  sign_out: 'Sign-out',
  session_revoked: 'Session revoked',
  identity_linked: 'Identity linked',
  identity_unlinked: 'Identity unlinked',
  backchannel_logout: 'Back-channel logout',
  access_denied: 'Access denied',
  oidc_grant_revoked: 'App sign-in ended',
  oidc_consent_given: 'App allowed (consent)',
  oidc_consent_refused: 'App refused (consent)',
  oidc_logout_delivered: 'App told of logout',
  oidc_logout_failed: 'App not told of logout',
  user_suspended: 'User suspended',
  user_reactivated: 'User reactivated',
  admin_granted: 'Admin role granted',
  admin_revoked: 'Admin role removed',
  app_created: 'App created',
  app_updated: 'App changed',
  app_deleted: 'App deleted',
  app_set_aside: 'App set aside (host taken)',
  client_secret_created: 'Client secret created',
  client_secret_revoked: 'Client secret revoked',
  provider_created: 'Provider added',
  provider_updated: 'Provider changed',
  provider_enabled: 'Provider turned on',
  provider_disabled: 'Provider turned off',
  provider_deleted: 'Provider deleted',
  provider_tested: 'Provider tested',
  provider_published: 'Provider published',
  sign_in_settings_updated: 'Sign-in settings changed',
  config_reloaded: 'Configuration reloaded',
};

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** A before/after value: plain values as they are, lists as "a, b" (or "none"), anything else as JSON. */
function shown(value: unknown): string {
  if (value === undefined || value === null) return 'none';
  if (Array.isArray(value)) return value.length > 0 ? value.map((item) => text(item) ?? JSON.stringify(item)).join(', ') : 'none';
  return text(value) ?? JSON.stringify(value);
}

/** `some_code` or `someCode` as words: "some code". */
function words(code: string): string {
  return code
    .replace(/([a-z])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`)
    .replace(/[_-]+/g, ' ')
    .trim();
}

/**
 * An event type as a label: "Failed sign-in". A stored row may name a type this version does not record
 * (one a version rolled back from wrote): shown as words ("Policy changed").
 */
export function eventTypeLabel(type: string): string {
  if (isAuditEventType(type)) return AUDIT_EVENT_LABELS[type];
  const plain = words(type);
  return plain ? plain.charAt(0).toUpperCase() + plain.slice(1) : 'Event';
}

/** `{ id, name }` (or just an id) as a name. */
function named(value: unknown): string | undefined {
  if (typeof value === 'object' && value !== null) {
    const fields = value as Details;
    return text(fields.name) ?? text(fields.id);
  }
  return text(value);
}

/** What changed between `details.before` and `details.after`: "status: active → suspended". */
function changes(details: Details): string[] {
  const before = details.before;
  const after = details.after;
  if (typeof before !== 'object' || before === null || typeof after !== 'object' || after === null) return [];
  const b = before as Details;
  const a = after as Details;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys
    .filter((key) => JSON.stringify(b[key]) !== JSON.stringify(a[key]))
    .map((key) => `${words(key)}: ${shown(b[key])} → ${shown(a[key])}`);
}

const SHOWN_ELSEWHERE = new Set(['before', 'after']);

/**
 * An event's details in a line: the app for a denial, the provider, the reason or code, what changed
 * for the admin events; other plain values as "key: value". Details of the wrong shape are ignored.
 */
export function describeAuditDetails(event: Pick<AuditEvent, 'type' | 'details' | 'providerId' | 'appId'>): string {
  const details: Details = typeof event.details === 'object' && event.details !== null ? event.details : {};
  const parts: string[] = [];
  const seen = new Set<string>(SHOWN_ELSEWHERE);

  const app = named(details.app) ?? text(event.appId);
  if (app) parts.push(`App: ${app}`);
  seen.add('app');

  const provider = named(details.provider) ?? text(event.providerId);
  if (provider) parts.push(`Provider: ${provider}`);
  seen.add('provider');

  for (const key of ['by', 'reason', 'code']) {
    const value = text(details[key]);
    // A refused sign-in's reason in words ("the email is not verified at the provider").
    const label = key === 'reason' ? signInRefusalLabel(value) : undefined;
    if (value) parts.push(`${key === 'by' ? 'By' : key === 'reason' ? 'Reason' : 'Code'}: ${label ?? words(value)}`);
    seen.add(key);
  }
  // Which rule refused, as the server wrote it for admins.
  const why = text(details.why);
  if (why) parts.push(`Why: ${why}`);
  seen.add('why');

  parts.push(...changes(details));

  for (const [key, value] of Object.entries(details)) {
    if (seen.has(key)) continue;
    const plain = text(value);
    if (plain !== undefined) parts.push(`${words(key)}: ${plain}`);
  }
  return parts.join(' · ');
}
