import type { IdentitiesResponse } from '../api/getIdentities';

/**
 * The name of the provider in `/account?linked=<providerId>`, the server's way of saying a link just
 * succeeded, or undefined when this account has no identity with it.
 *
 * Threat: content injection. Anyone can craft a link with `?linked=...`, so the value from the URL is
 * never shown: it only picks the name of a provider this account really has an identity with.
 */
export function linkedProviderName(providerId: string | null | undefined, data: IdentitiesResponse | undefined): string | undefined {
  if (!providerId || !data) return undefined;
  return data.identities.find((identity) => identity.provider.id === providerId)?.provider.name;
}
