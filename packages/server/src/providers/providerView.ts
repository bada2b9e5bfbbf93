import { endpoints } from '@gatehouse/contract';
import type { ProviderRegistry } from './providerRegistry.js';
import { providerWarnings, type ProviderConfig } from '../config/schema.js';
import { isoOrNull } from '../http/isoTime.js';
import { presetOptions } from './providerPresets.js';
import type { ReplacedCredentials } from './providerStore.js';

/**
 * A provider as the admin API shows it: its normalised definition as it is (the contract's view schema
 * names which fields go out), with its state beside it. The client secret and private key are
 * write-only: only whether one is set goes out (`hasClientSecret`, `hasPrivateKey`), and the response
 * schema is the allow-list that drops anything else, so a credential cannot leak through these routes
 * by accident.
 */
export function providerView(provider: ProviderConfig, registry: ProviderRegistry, portalOrigin: string, linkedIdentities: number) {
  const { clientSecret, privateKey, ...definition } = provider;
  const status = registry.status(provider.id);
  return {
    ...definition,
    options: presetOptions(provider),
    source: registry.source(provider.id) ?? 'console',
    discovery: { status: status?.status ?? 'pending', error: status?.lastError ?? null, checkedAt: isoOrNull(status?.checkedAt ?? null) },
    publication: publicationView(registry, provider.id),
    redirectUri: `${portalOrigin}${endpoints.callbackUrl(provider.id)}`,
    backchannelLogoutUri: `${portalOrigin}${endpoints.backchannelLogoutUrl(provider.id)}`,
    hasClientSecret: Boolean(clientSecret),
    hasPrivateKey: Boolean(privateKey),
    linkedIdentities,
    warnings: providerWarnings(provider),
  };
}

/** Hidden until tested (console providers), or published and how; gatehouse.yaml's are always published. */
function publicationView(registry: ProviderRegistry, id: string) {
  if (registry.hidden(id)) return { state: 'hidden' as const, how: null, at: null };
  const publication = registry.publication(id);
  return {
    state: 'published' as const,
    how: registry.source(id) === 'console' ? (publication?.how ?? 'existing') : null,
    at: isoOrNull(publication?.at ?? null),
  };
}

/**
 * A provider as the audit log records it (before/after of every change): the whole definition with the
 * credential redacted to whether it is set, or was replaced by this change.
 */
export function providerAuditView(provider: ProviderConfig | null, replaced: Partial<ReplacedCredentials> = {}) {
  if (!provider) return null;
  const { clientSecret, privateKey, ...definition } = provider;
  const redacted = (isReplaced: boolean | undefined) => (isReplaced ? '(replaced)' : '(set)');
  return {
    ...definition,
    ...(clientSecret ? { clientSecret: redacted(replaced.clientSecret) } : {}),
    ...(privateKey ? { privateKey: redacted(replaced.privateKey) } : {}),
  };
}
