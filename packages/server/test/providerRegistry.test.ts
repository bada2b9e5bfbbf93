import type { ProviderConnection } from '../src/authenticate/providers/index.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ProviderRegistry } from '../src/authenticate/providerRegistry.js';
import { providerSchema, type ProviderConfig } from '../src/config/schema.js';

const log = pino({ level: 'silent' });
const provider = (id: string, extra: Record<string, unknown> = {}): ProviderConfig =>
  providerSchema.parse({ id, name: id.toUpperCase(), issuer: `https://${id}.example.com`, clientId: 'gatehouse', clientSecret: 's3cret', ...extra });

/** A discovery stand-in: counts calls per provider and answers with a fresh object each time. */
function fakeDiscovery() {
  const calls: string[] = [];
  const pending = new Map<string, Array<(value: ProviderConnection) => void>>();
  let hold = false;
  const discover = (config: ProviderConfig): Promise<ProviderConnection> => {
    calls.push(`${config.id}:${config.clientId}`);
    const configuration = { id: config.id, clientId: config.clientId } as unknown as ProviderConnection;
    if (!hold) return Promise.resolve(configuration);
    return new Promise((resolve) => pending.set(config.id, [...(pending.get(config.id) ?? []), () => resolve(configuration)]));
  };
  return {
    discover,
    calls,
    hold: () => (hold = true),
    release: (id: string) => pending.get(id)?.forEach((resolve) => resolve({} as ProviderConnection)),
  };
}

describe('provider registry: config and console providers', () => {
  it('lists config providers first, knows where each comes from, and lets config win a clash', () => {
    const registry = new ProviderRegistry([provider('dev')], log, fakeDiscovery().discover);
    registry.setConsoleProviders([provider('corp'), provider('dev', { name: 'Impostor' })]);
    expect(registry.all().map((p) => [p.id, p.name, registry.source(p.id)])).toEqual([
      ['dev', 'DEV', 'config'],
      ['corp', 'CORP', 'console'],
    ]);
  });

  it('a disabled provider is not offered (get, enabled, /readyz) but the console still finds it', () => {
    const registry = new ProviderRegistry([provider('dev')], log, fakeDiscovery().discover);
    registry.setConsoleProviders([provider('corp', { enabled: false })]);
    expect(registry.get('corp')).toBeUndefined();
    expect(registry.enabled().map((p) => p.id)).toEqual(['dev']);
    expect(registry.statuses().map((s) => s.id)).toEqual(['dev']);
    expect(registry.find('corp')?.enabled).toBe(false);
    expect(registry.name('corp')).toBe('CORP');
    expect(registry.name('gone')).toBe('gone');
  });

  it('keeps the discovered configuration across an on/off change, rediscovers a changed definition', async () => {
    const discovery = fakeDiscovery();
    const registry = new ProviderRegistry([], log, discovery.discover);
    registry.setConsoleProviders([provider('corp')]);
    const first = await registry.connection('corp');
    expect(registry.status('corp')?.status).toBe('ready');

    registry.setConsoleProviders([provider('corp', { enabled: false })]);
    registry.setConsoleProviders([provider('corp')]);
    expect(await registry.connection('corp')).toBe(first);
    expect(discovery.calls).toEqual(['corp:gatehouse']);

    // A new client id (or secret, issuer, ...) is another client: the old configuration is dropped.
    registry.setConsoleProviders([provider('corp', { clientId: 'other' })]);
    expect(registry.status('corp')?.status).toBe('pending');
    const second = await registry.connection('corp');
    expect(second).not.toBe(first);
    expect(discovery.calls).toEqual(['corp:gatehouse', 'corp:other']);
  });

  it('a removed provider is gone at once: not offered, no configuration, 404 for sign-in', async () => {
    const registry = new ProviderRegistry([], log, fakeDiscovery().discover);
    registry.setConsoleProviders([provider('corp')]);
    await registry.connection('corp');
    registry.setConsoleProviders([]);
    expect(registry.find('corp')).toBeUndefined();
    await expect(registry.connection('corp')).rejects.toMatchObject({ code: 'not_found' });
  });

  // Threat: a discovery of the old definition finishing after a change must not be used for the new one.
  it('a discovery in flight when the definition changes never becomes the new definition’s configuration', async () => {
    const discovery = fakeDiscovery();
    const registry = new ProviderRegistry([], log, discovery.discover);
    registry.setConsoleProviders([provider('corp')]);
    discovery.hold();
    const old = registry.connection('corp');
    registry.setConsoleProviders([provider('corp', { clientId: 'rotated' })]);
    discovery.release('corp');
    await old;
    expect(registry.status('corp')?.status).toBe('pending');
    const fresh = registry.connection('corp');
    discovery.release('corp');
    await fresh;
    expect(discovery.calls).toEqual(['corp:gatehouse', 'corp:rotated']);
  });

  it('once started, a new enabled console provider is discovered in the background; a disabled one is not', async () => {
    const discovery = fakeDiscovery();
    const registry = new ProviderRegistry([], log, discovery.discover);
    registry.start();
    registry.setConsoleProviders([provider('corp'), provider('off', { enabled: false })]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(discovery.calls).toEqual(['corp:gatehouse']);
    expect(registry.status('corp')?.status).toBe('ready');
    expect(registry.status('off')?.status).toBe('pending');
    registry.close();
  });

  it('a failing discovery is reported with its reason and answers provider_unavailable', async () => {
    const registry = new ProviderRegistry([], log, () => Promise.reject(new Error('connect ECONNREFUSED')));
    registry.setConsoleProviders([provider('corp')]);
    await expect(registry.connection('corp')).rejects.toMatchObject({ code: 'provider_unavailable' });
    expect(registry.status('corp')).toMatchObject({ status: 'unavailable', lastError: 'connect ECONNREFUSED' });
  });
});
