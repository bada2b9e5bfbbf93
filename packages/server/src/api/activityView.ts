import type { ActivityEvent } from '@gatehouse/contract';
import type { AuditEntry } from '../audit/auditLog.js';
import { describeDevice } from '../sessions/describeDevice.js';

/**
 * What a person may see of an event of their own account (`GET /api/me/activity`): its type, time and
 * outcome, the app and the provider by name, a sentence and its second line in their words, and where
 * it came from when it was their own doing. Never the audit log's details as they are: those are for
 * admins (the rule that denied, with the emails it names; a refusal's reason and the sentence `why`
 * written for admins; an administrator's address; what a refresh failure said). The answer is built
 * from this allow-list, field by field, and the contract's schema strips anything else.
 */

type Details = Record<string, unknown>;

/** The names the view gives things by their ids, as they are now (an event recorded before a rename keeps its recorded name). */
export interface ActivityNames {
  provider(id: string): string;
  app(id: string): string | undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim() : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** `{ id, name }` as events record it (or an id alone). */
function recordedRef(value: unknown): { id: string | undefined; name: string | undefined } {
  if (typeof value === 'object' && value !== null) {
    const fields = value as Record<string, unknown>;
    return { id: text(fields.id), name: text(fields.name) };
  }
  return { id: text(value), name: undefined };
}

/**
 * Why a sign-in or a link did not succeed, from the error catalogue's code (what the person's own error
 * page said), never from the rule that refused: a refusal's reason and its sentence are the admins'.
 */
const FAILURES: Record<string, string> = {
  provider_unavailable: 'The provider could not be reached.',
  provider_misconfigured: 'The provider is not set up correctly; an administrator can fix it.',
  provider_disabled: 'Signing in with this provider is turned off.',
  sign_in_expired: 'The sign-in took too long or was already used.',
  sign_in_denied: 'The provider did not sign you in.',
  sign_in_not_allowed: 'This account may not sign in here.',
  invalid_response: "The provider's answer could not be verified.",
  identity_conflict: 'That account is already linked to another user, or its email belongs to one.',
  account_suspended: 'The account is suspended.',
  rate_limited: 'Too many attempts.',
  csrf_failed: 'The request could not be verified.',
};

/** A map's own entry for a recorded value, never one inherited from Object ("constructor", "toString"). */
function lookup(map: Record<string, string>, key: string | undefined): string | undefined {
  return key !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

function failure(details: Details): string | null {
  return lookup(FAILURES, text(details.code)) ?? null;
}

/** Why a session ended, for the reasons Gatehouse records (never the text an IdP gave with it). */
const ENDED_BECAUSE: Record<string, string> = {
  'refresh-failed': 'Your identity provider no longer confirmed your sign-in.',
  'admission-changed': 'The rules of who may sign in here changed, and your account no longer meets them.',
  'claims-refused': 'Your identity provider now says something about your account that the rules of who may sign in here do not accept.',
  'claims-unconfirmed': 'Your identity provider could not confirm your account for too long.',
  'provider-disabled': 'Signing in with the provider it used was turned off.',
  'sign-out-everywhere-else': 'You signed out everywhere else.',
  'revoked-by-admin': '',
  'revoked-by-user': '',
};

const REVOKED_BY: Record<string, string> = {
  user: 'Session revoked by you',
  admin: 'Session revoked by an administrator',
  idp: 'Session ended by your identity provider',
  system: 'Session ended by Gatehouse',
};

function sessionsEnded(n: number | undefined): string | null {
  if (n === undefined || n === 0) return null;
  return n === 1 ? '1 session ended.' : `${n} sessions ended.`;
}

/**
 * Whether the event was the person's own doing, so where it came from is theirs to see: they acted
 * (signing in, out, linking, ending a session), one of their own sign-ins was refused, or a request of
 * their own session found it ended. Not an administrator's action, not an IdP's call: those addresses
 * are not the person's.
 */
function ownDoing(entry: AuditEntry, userId: string, details: Details): boolean {
  if (entry.actorUserId === userId) return true;
  if (entry.actorUserId !== null) return false;
  return entry.type === 'sign_in_failed' || (entry.type === 'session_revoked' && details.by === 'system');
}

/** The sentence and the second line for an event, in the person's words. */
function words(entry: AuditEntry, details: Details, provider: string | undefined, app: string | undefined): { summary: string; detail: string | null } {
  const failed = entry.outcome === 'failure';
  switch (entry.type) {
    case 'sign_in':
    case 'sign_in_failed':
      if (entry.type === 'sign_in' && !failed) return { summary: provider ? `Signed in with ${provider}` : 'Signed in', detail: null };
      return { summary: provider ? `Sign-in with ${provider} failed` : 'Sign-in failed', detail: failure(details) };
    case 'sign_out':
      if (details.everywhere === true) return { summary: 'Signed out everywhere', detail: sessionsEnded(count(details.sessions)) };
      return { summary: 'Signed out', detail: null };
    case 'session_revoked': {
      return { summary: lookup(REVOKED_BY, text(details.by)) ?? 'Session revoked', detail: lookup(ENDED_BECAUSE, text(details.reason)) || null };
    }
    case 'identity_linked':
      if (!failed) return { summary: `Linked ${provider ?? 'an identity provider'}`, detail: null };
      return { summary: `Linking ${provider ?? 'an identity provider'} failed`, detail: failure(details) };
    case 'identity_unlinked': {
      const ended = count(details.sessionsEnded);
      return {
        summary: `Unlinked ${provider ?? 'an identity provider'}`,
        detail: ended ? (ended === 1 ? 'The session signed in with it ended.' : `The ${ended} sessions signed in with it ended.`) : null,
      };
    }
    case 'backchannel_logout':
      return { summary: `${provider ?? 'Your identity provider'} signed you out`, detail: sessionsEnded(count(details.sessions)) };
    case 'access_denied':
      return { summary: app ? `Denied access to ${app}` : 'Denied access to an app', detail: "Your account is not among those this app's rules let in." };
    case 'oidc_grant_revoked':
      if (details.by === 'admin') return { summary: app ? `An administrator signed you out of ${app}` : 'An administrator signed you out of an app', detail: null };
      return { summary: app ? `You signed out of ${app}` : 'You signed out of an app', detail: null };
    case 'oidc_consent_given':
      return { summary: app ? `You allowed ${app} to sign you in` : 'You allowed an app to sign you in', detail: null };
    case 'oidc_consent_refused':
      return { summary: app ? `You refused ${app}` : 'You refused an app', detail: null };
    case 'oidc_logout_delivered':
      return { summary: app ? `Signed out of ${app}` : 'Signed out of an app', detail: null };
    case 'oidc_logout_failed':
      // The person may still be signed in there: the one thing they can do about it is say so.
      return { summary: app ? `${app} could not be told that you signed out` : 'An app could not be told that you signed out', detail: 'You may still be signed in there: sign out in the app itself.' };
    case 'user_suspended':
      return { summary: 'Your account was suspended by an administrator', detail: sessionsEnded(count(details.sessionsEnded)) };
    case 'user_reactivated':
      return { summary: 'Your account was reactivated by an administrator', detail: null };
    case 'admin_granted':
      return { summary: 'You were made an administrator', detail: null };
    case 'admin_revoked':
      return { summary: 'You are no longer an administrator', detail: null };
    default:
      return { summary: 'Account activity', detail: failed ? 'It did not succeed.' : null };
  }
}

/** One event of the person's own account as they may see it. */
export function activityView(entry: AuditEntry, userId: string, names: ActivityNames): Omit<ActivityEvent, 'time'> & { time: number } {
  const details: Details = typeof entry.details === 'object' && entry.details !== null ? entry.details : {};
  const recordedProvider = recordedRef(details.provider);
  const providerId = entry.providerId ?? recordedProvider.id;
  const provider = providerId ? { id: providerId, name: recordedProvider.name ?? names.provider(providerId) } : null;
  // An app is named where the event is about one (access denied records it as `{ id, name }`).
  const recordedApp = typeof details.app === 'object' ? recordedRef(details.app) : { id: undefined, name: undefined };
  const appId = entry.appId ?? recordedApp.id;
  const appName = recordedApp.name ?? (appId ? names.app(appId) : undefined);
  const own = ownDoing(entry, userId, details);
  return {
    id: entry.id,
    time: entry.time,
    type: entry.type,
    outcome: entry.outcome,
    ...words(entry, details, provider?.name, appName),
    app: appName ? { name: appName } : null,
    provider,
    ip: own ? entry.ip : null,
    device: own && entry.userAgent ? describeDevice(entry.userAgent) : null,
  };
}
