import type { ProviderConnection } from '../src/providers/kinds/index.js';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { ProviderRegistry } from '../src/providers/providerRegistry.js';
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

  it('a disabled provider is not offered (get, enabled, /readyz) but the console still finds it', async () => {
    const registry = new ProviderRegistry([provider('dev')], log, fakeDiscovery().discover);
    registry.setConsoleProviders([provider('corp', { enabled: false })]);
    expect(registry.get('corp')).toBeUndefined();
    expect(registry.enabled().map((p) => p.id)).toEqual(['dev']);
    expect((await registry.statuses()).map((s) => s.id)).toEqual(['dev']);
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

describe('provider registry: availability, checked actively', () => {
  /** A connection whose probe answers as the test says: at once, with an error, or never (a frozen IdP). */
  function probing() {
    const state = { mode: 'up' as 'up' | 'down' | 'frozen', probes: 0 };
    const connection = {
      probe: (signal: AbortSignal) => {
        state.probes += 1;
        if (state.mode === 'up') return Promise.resolve();
        if (state.mode === 'down') return Promise.reject(new Error('connect ECONNREFUSED'));
        return new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    } as unknown as ProviderConnection;
    return { state, discover: () => Promise.resolve(connection) };
  }

  it('reads an IdP that stopped answering as unavailable, and available again once it answers', async () => {
    const idp = probing();
    let now = 0;
    const registry = new ProviderRegistry([provider('dev')], log, idp.discover, { timeoutMs: 200, freshMs: 1000 }, () => now);
    expect((await registry.availability(['dev'])).get('dev')).toBe('available');
    idp.state.mode = 'down';
    // Within the few seconds a check is used for, the IdP is not asked again.
    expect((await registry.availability(['dev'])).get('dev')).toBe('available');
    expect(idp.state.probes).toBe(1);
    now = 1000;
    const [status] = await registry.statuses();
    expect(status).toMatchObject({ id: 'dev', availability: 'unavailable', error: 'connect ECONNREFUSED' });
    idp.state.mode = 'up';
    now = 2000;
    // The sign-in page gets the last answer at once, and the check it started brings the new one.
    expect((await registry.availability(['dev'])).get('dev')).toBe('unavailable');
    await vi.waitFor(async () => expect((await registry.availability(['dev'])).get('dev')).toBe('available'));
  });

  it('never keeps the sign-in page waiting on a frozen IdP it has checked before', async () => {
    const idp = probing();
    let now = 0;
    const registry = new ProviderRegistry([provider('dev')], log, idp.discover, { timeoutMs: 10_000, freshMs: 1000 }, () => now);
    expect((await registry.availability(['dev'])).get('dev')).toBe('available');
    idp.state.mode = 'frozen';
    now = 5000;
    // The check now takes up to its 10 s timeout; the page's answer comes before the event loop's next
    // turn, with the last answer, rather than wait for it.
    const answer = await Promise.race([registry.availability(['dev']), new Promise<'waited'>((resolve) => setImmediate(() => resolve('waited')))]);
    expect(answer).not.toBe('waited');
    expect((answer as Map<string, string>).get('dev')).toBe('available');
    expect(idp.state.probes).toBe(2);
    registry.close();
  });

  it('reads a frozen IdP (connection accepted, no answer) as unavailable within the timeout', async () => {
    const idp = probing();
    idp.state.mode = 'frozen';
    const registry = new ProviderRegistry([provider('dev')], log, idp.discover, { timeoutMs: 150, freshMs: 1000 });
    const started = Date.now();
    const [status] = await registry.statuses();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(status).toMatchObject({ availability: 'unavailable', error: 'no answer within 0.15 s' });
  });

  it('reads an IdP whose discovery never answers as unavailable within the timeout, and shares one check between callers', async () => {
    let discoveries = 0;
    const registry = new ProviderRegistry(
      [provider('dev')],
      log,
      () => {
        discoveries += 1;
        return new Promise<ProviderConnection>(() => {});
      },
      { timeoutMs: 100, freshMs: 1000 },
    );
    const [first, second] = await Promise.all([registry.availability(['dev']), registry.availability(['dev', 'gone'])]);
    expect(first.get('dev')).toBe('unavailable');
    expect(second.get('dev')).toBe('unavailable');
    expect(second.has('gone')).toBe(false);
    expect(discoveries).toBe(1);
  });
});
