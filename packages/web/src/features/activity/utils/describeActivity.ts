import type { ActivityEvent } from '@gatehouse/contract';
import { signInRefusalLabel } from '../../../lib/signInRefusals';

/** Which picture goes with an event. */
export type ActivityKind = 'sign-in' | 'sign-out' | 'revoke' | 'link' | 'unlink' | 'other';

export interface ActivityDescription {
  /** The event as a sentence: "Signed in with Development IdP", "Session revoked by you". */
  title: string;
  /** A second line, when there is more to say (why it failed, why a session ended). */
  detail?: string;
  kind: ActivityKind;
  failed: boolean;
}

type Details = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim() : undefined;
}

/** `details.provider` is `{ id, name }`; older events may carry just the id. */
function providerName(details: Details): string | undefined {
  const provider = details.provider;
  if (typeof provider === 'object' && provider !== null) {
    const fields = provider as Record<string, unknown>;
    return text(fields.name) ?? text(fields.id);
  }
  return text(provider);
}

/** `some_code` or `some-code` as words: "some code". */
function words(code: string): string {
  return code.replace(/[_-]+/g, ' ').trim();
}

/** Why a sign-in failed, from the error catalogue's codes (PRODUCT.md, "Error catalogue"). */
const SIGN_IN_FAILURES: Record<string, string> = {
  provider_unavailable: 'the provider could not be reached',
  provider_misconfigured: 'the provider is not set up correctly',
  sign_in_expired: 'the sign-in took too long or was already used',
  sign_in_denied: 'the provider did not sign you in',
  sign_in_not_allowed: 'this account may not sign in here',
  invalid_response: "the provider's answer could not be verified",
  identity_conflict: 'the email address belongs to another account',
  account_suspended: 'the account is suspended',
  access_denied: 'access was denied',
  rate_limited: 'too many attempts',
  csrf_failed: 'the request could not be verified',
};

/** Why a session ended, for the reasons the server records. */
const REVOKE_REASONS: Record<string, string> = {
  expired: 'it expired',
  idle_timeout: 'it was idle for too long',
  absolute_timeout: 'it reached its maximum lifetime',
  suspended: 'the account was suspended',
  account_suspended: 'the account was suspended',
  refresh_failed: 'the provider no longer confirmed the sign-in',
  sign_out: 'signed out',
  sign_out_everywhere: 'signed out everywhere',
  revoke_others: 'signed out everywhere else',
  sign_out_everywhere_else: 'signed out everywhere else',
  // The title ("Session revoked by you") says it all.
  revoked_by_user: '',
  identity_unlinked: 'the identity it used was unlinked',
  backchannel_logout: 'the provider ended its session',
  provider_disabled: 'the provider it used was turned off',
  admission_changed: 'the rules of who may sign in changed, and this account no longer meets them',
  claims_refused: 'the provider now says something about this account that the sign-in rules refuse',
  claims_unconfirmed: 'the provider could not confirm the account for too long',
};

function reason(map: Record<string, string>, code: unknown): string | undefined {
  const value = text(code);
  if (!value) return undefined;
  return (map[value] ?? map[value.replace(/-/g, '_')] ?? words(value)) || undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function sessionsEnded(n: number | undefined): string | undefined {
  if (n === undefined) return undefined;
  return n === 1 ? '1 session ended.' : `${n} sessions ended.`;
}

function withDetail(description: Omit<ActivityDescription, 'detail'>, detail: string | undefined): ActivityDescription {
  return detail ? { ...description, detail } : description;
}

function signInFailed(provider: string | undefined, details: Details): ActivityDescription {
  // The rule that refused, when one did; else what the catalogue code says.
  const why = signInRefusalLabel(details.reason) ?? reason(SIGN_IN_FAILURES, details.code);
  return withDetail(
    { title: provider ? `Sign-in with ${provider} failed` : 'Sign-in failed', kind: 'sign-in', failed: true },
    why ? `Reason: ${why}.` : undefined,
  );
}

const REVOKED_BY: Record<string, string> = {
  user: 'Session revoked by you',
  admin: 'Session revoked by an administrator',
  idp: 'Session ended by your identity provider',
  system: 'Session ended by Gatehouse',
};

/**
 * An activity event as a person would say it. Types this version does not know (the server may add
 * some) get a generic line rather than nothing, and details of the wrong shape are ignored.
 */
export function describeActivity(event: Pick<ActivityEvent, 'type' | 'outcome' | 'details'>): ActivityDescription {
  const details: Details = typeof event.details === 'object' && event.details !== null ? event.details : {};
  const failed = event.outcome === 'failure';
  const provider = providerName(details);

  switch (event.type) {
    case 'sign_in':
      // A sign_in whose outcome is "failure" reads like sign_in_failed.
      if (failed) return signInFailed(provider, details);
      return { title: provider ? `Signed in with ${provider}` : 'Signed in', kind: 'sign-in', failed };
    case 'sign_in_failed':
      return signInFailed(provider, details);
    case 'sign_out':
      if (details.everywhere === true) {
        return withDetail({ title: failed ? 'Signing out everywhere failed' : 'Signed out everywhere', kind: 'sign-out', failed }, sessionsEnded(count(details.sessions)));
      }
      return { title: failed ? 'Sign-out failed' : 'Signed out', kind: 'sign-out', failed };
    case 'session_revoked': {
      const by = text(details.by);
      const why = reason(REVOKE_REASONS, details.reason);
      return withDetail(
        { title: (by && REVOKED_BY[by]) ?? 'Session revoked', kind: 'revoke', failed },
        why ? `Reason: ${why}.` : undefined,
      );
    }
    case 'identity_linked': {
      const name = provider ?? 'an identity provider';
      if (!failed) return { title: `Linked ${name}`, kind: 'link', failed };
      const why = signInRefusalLabel(details.reason) ?? reason(SIGN_IN_FAILURES, details.code);
      return withDetail({ title: `Linking ${name} failed`, kind: 'link', failed }, why ? `Reason: ${why}.` : undefined);
    }
    case 'identity_unlinked': {
      const name = provider ?? 'an identity provider';
      const ended = count(details.sessionsEnded);
      return withDetail(
        { title: failed ? `Unlinking ${name} failed` : `Unlinked ${name}`, kind: 'unlink', failed },
        ended ? (ended === 1 ? 'The session signed in with it ended.' : `The ${ended} sessions signed in with it ended.`) : undefined,
      );
    }
    case 'backchannel_logout':
      return withDetail(
        { title: `${provider ?? 'Your identity provider'} signed you out`, kind: 'sign-out', failed },
        sessionsEnded(count(details.sessions)),
      );
    default: {
      const type = text(event.type);
      return withDetail(
        { title: type ? `Account activity: ${words(type)}` : 'Account activity', kind: 'other', failed },
        failed ? 'It did not succeed.' : undefined,
      );
    }
  }
}
