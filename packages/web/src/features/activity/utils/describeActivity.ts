import { isAuditEventType, type ActivityEvent, type AuditEventType } from '@gatehouse/contract';
import { deviceLabel } from '../../../lib/deviceLabel';

/** Which picture goes with an event. */
export type ActivityKind = 'sign-in' | 'sign-out' | 'revoke' | 'link' | 'unlink' | 'denied' | 'other';

export interface ActivityDescription {
  /** The event as a sentence, as the server words it for the person: "Signed in with Development IdP", "Denied access to Wiki". */
  title: string;
  /** A second line, when there is more to say (why it failed, how many sessions ended). */
  detail?: string;
  /** Where it came from ("Chrome 140 on Linux, 203.0.113.7"), when it was the person's own doing. */
  origin?: string;
  kind: ActivityKind;
  failed: boolean;
}

/** The pictures of the types a person sees most; the others get the generic one. */
const KINDS: Partial<Record<AuditEventType, ActivityKind>> = {
  sign_in: 'sign-in',
  sign_in_failed: 'sign-in',
  sign_out: 'sign-out',
  backchannel_logout: 'sign-out',
  session_revoked: 'revoke',
  identity_linked: 'link',
  identity_unlinked: 'unlink',
  access_denied: 'denied',
  oidc_grant_revoked: 'revoke',
  oidc_consent_refused: 'denied',
  oidc_logout_delivered: 'sign-out',
};

/**
 * An event of "Recent activity" as the page shows it: the server's person-facing view of it
 * (`GET /api/me/activity`: a sentence, a second line, the app and provider by name, where it came from
 * when it was the person's own doing), with a picture by its type. Types this version does not know
 * get the generic picture; the server words them anyway.
 */
export function describeActivity(event: Pick<ActivityEvent, 'type' | 'outcome' | 'summary' | 'detail' | 'ip' | 'device'>): ActivityDescription {
  const description: ActivityDescription = {
    title: event.summary.trim() || 'Account activity',
    kind: (isAuditEventType(event.type) ? KINDS[event.type] : undefined) ?? 'other',
    failed: event.outcome === 'failure',
  };
  const detail = event.detail?.trim();
  if (detail) description.detail = detail;
  const origin = [event.device ? deviceLabel(event.device) : undefined, event.ip ?? undefined].filter(Boolean).join(', ');
  if (origin) description.origin = origin;
  return description;
}
