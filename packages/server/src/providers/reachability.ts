import { pino } from 'pino';
import type { ProviderConfig } from '../config/schema.js';
import { ProviderRegistry } from './providerRegistry.js';
import { connect, type IdpFetch } from './kinds/index.js';

/** A provider whose IdP did not answer, and why. */
export interface Unreachable {
  id: string;
  name: string;
  issuer: string;
  error: string;
}

/** How long `check-config --online` waits for each IdP (all are asked at once). */
export const ONLINE_CHECK_TIMEOUT_MS = 5_000;

/**
 * `check-config --online`: each enabled provider prepared and asked whether it answers, exactly as a
 * running Gatehouse does for /readyz (the registry's availability check: discovery with openid-client
 * through the kind's runtime, then a fresh fetch of the JWKS), all at once, each within `timeoutMs`.
 * Every request of the check is cut a second after that (the check has said "no answer" by then), so
 * that none keeps the command waiting for openid-client's own, longer, timeout.
 */
export async function unreachableProviders(providers: readonly ProviderConfig[], { timeoutMs = ONLINE_CHECK_TIMEOUT_MS }: { timeoutMs?: number } = {}): Promise<Unreachable[]> {
  const deadline = AbortSignal.timeout(timeoutMs + 1_000);
  const bounded: IdpFetch = (url, init) => fetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
  const enabled = providers.filter((provider) => provider.enabled);
  const registry = new ProviderRegistry(enabled, pino({ level: 'silent' }), (provider) => connect(provider, { fetch: bounded }), { timeoutMs, freshMs: 0 });
  try {
    return unreachableAmong(await registry.statuses(), enabled);
  } finally {
    registry.close();
  }
}

/** The unavailable ones of a registry's statuses (`ProviderRegistry.statuses`), among `providers`. */
export function unreachableAmong(
  statuses: ReadonlyArray<{ id: string; availability: string; error?: string | undefined }>,
  providers: readonly ProviderConfig[],
): Unreachable[] {
  return statuses.flatMap(({ id, availability, error }) => {
    const provider = providers.find((candidate) => candidate.id === id);
    if (!provider || availability !== 'unavailable') return [];
    return [{ id, name: provider.name, issuer: provider.issuer, error: error ?? 'no answer' }];
  });
}

/** What an operator is told of one: a warning, never an error (an IdP down for a minute must not stop a deploy). */
export function unreachableMessage({ name, issuer, error }: Unreachable): string {
  return `${issuer} did not answer (${error}); signing in with ${name} fails until it does (Gatehouse keeps asking)`;
}
