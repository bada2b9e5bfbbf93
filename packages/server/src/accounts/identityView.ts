import type { ProviderRef } from '@gatehouse/contract';
import type { Identity } from '../storage/schema.js';
import { iso, isoOrNull } from '../http/isoTime.js';

/** A linked identity as the account center and the admin console show it (the contract's identityViewSchema). */
export function identityView(identity: Identity, provider: ProviderRef) {
  return {
    id: identity.id,
    provider,
    subject: identity.subject,
    email: identity.email,
    linkedAt: iso(identity.linked_at),
    lastUsedAt: isoOrNull(identity.last_used_at),
  };
}
