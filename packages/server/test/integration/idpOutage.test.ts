import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBuiltProcess, type BuiltProcess } from './support/builtProcess.js';
import { startDevIdpProcess, type DevIdpProcess } from './support/devIdpProcess.js';
import { freePort } from '../support/ports.js';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { createTestStore, removeTestStore, storeConfig, type TestStore } from './support/testStore.js';

/**
 * An IdP that goes down, freezes or comes back, with the real development IdP as a separate process:
 * Gatehouse keeps serving, and says which provider cannot be used right now (/api/providers for the
 * sign-in page, /readyz for operators) from an active check, not from the discovery made at start.
 */

interface Readiness {
  status: string;
  checks: { providers: Array<{ id: string; status: string; availability: string; error?: string }> };
}
interface Providers {
  providers: Array<{ id: string; availability: string }>;
}

/** The registry's defaults: a check may take 2 s, and its answer is used for 5 s. */
const CHECK_TIMEOUT_MS = 2_000;
const CHECK_FRESH_MS = 5_000;

async function getJson<T>(url: string): Promise<{ body: T; ms: number }> {
  const started = Date.now();
  const response = await fetch(url);
  const body = (await response.json()) as T;
  return { body, ms: Date.now() - started };
}

/** Polls until `read` gives what `done` wants, for at most `withinMs`; returns the last reading. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await read();
  }
  return value;
}

describe('an IdP that stops answering', () => {
  let idp: DevIdpProcess;
  let other: DevIdpProcess;
  let gatehouse: RunningGatehouse;

  beforeAll(async () => {
    const port = await freePort();
    const portal = `http://localhost:${port}`;
    const redirects = { redirectUris: [`${portal}/.gatehouse/callback/dev`, `${portal}/.gatehouse/callback/partner`], postLogoutRedirectUris: [`${portal}/signed-out`] };
    idp = await startDevIdpProcess(redirects);
    other = await startDevIdpProcess({ ...redirects, name: 'Partner IdP', userSet: 'partner' });
    const client = { clientId: 'gatehouse', clientSecret: 'gatehouse-dev-secret' };
    gatehouse = await startGatehouse({
      port,
      // Operators read each check on the metrics listener's /readyz (the public one gives strangers the status alone).
      metrics: { listen: { port: 0 } },
      providers: [
        { id: 'dev', name: 'Development IdP', issuer: idp.issuer, ...client },
        { id: 'partner', name: 'Partner IdP', issuer: other.issuer, ...client },
      ],
    });
  });

  afterAll(async () => {
    // A frozen process handles no SIGTERM: it is woken first.
    for (const process of [idp, other]) process?.child.kill('SIGCONT');
    await gatehouse?.close();
    await Promise.all([idp?.close(), other?.close()]);
  });

  const readiness = () => getJson<Readiness>(gatehouse.readinessUrl!);
  const providers = () => getJson<Providers>(`${gatehouse.url}/api/providers`);
  const availabilityOf = (id: string, list: Array<{ id: string; availability: string }>) => list.find((provider) => provider.id === id)?.availability;

  it('a frozen IdP (connections accepted, never answered) reads unavailable within the check timeout, and available once it answers', async () => {
    const before = await readiness();
    expect(before.body.checks.providers.map(({ id, availability }) => [id, availability])).toEqual([
      ['dev', 'available'],
      ['partner', 'available'],
    ]);
    expect(availabilityOf('dev', (await providers()).body.providers)).toBe('available');

    idp.child.kill('SIGSTOP');
    try {
      // The answer from before is used for a few seconds at most; the check after it gives up after its timeout.
      const frozen = await until(readiness, ({ body }) => availabilityOf('dev', body.checks.providers) === 'unavailable', CHECK_FRESH_MS + CHECK_TIMEOUT_MS + 3_000);
      const dev = frozen.body.checks.providers.find((provider) => provider.id === 'dev');
      expect(dev).toMatchObject({ availability: 'unavailable', error: 'no answer within 2 s' });
      // Bounded by the check's timeout, however long the IdP stays frozen.
      expect(frozen.ms).toBeLessThan(CHECK_TIMEOUT_MS + 1_500);
      // Readiness is not decided by one IdP, and the other IdP is unaffected.
      expect(frozen.body.status).toBe('ready');
      expect(availabilityOf('partner', frozen.body.checks.providers)).toBe('available');
      // The sign-in page is told too, quickly (the check just made is shared).
      const list = await providers();
      expect(availabilityOf('dev', list.body.providers)).toBe('unavailable');
      expect(availabilityOf('partner', list.body.providers)).toBe('available');
      expect(list.ms).toBeLessThan(CHECK_TIMEOUT_MS + 1_500);
    } finally {
      idp.child.kill('SIGCONT');
    }
    const thawed = await until(providers, ({ body }) => availabilityOf('dev', body.providers) === 'available', CHECK_FRESH_MS + CHECK_TIMEOUT_MS + 3_000);
    expect(availabilityOf('dev', thawed.body.providers)).toBe('available');
  });

  it('a stopped IdP reads unavailable with the reason on /readyz, and Gatehouse keeps serving', async () => {
    await idp.close();
    const stopped = await until(readiness, ({ body }) => availabilityOf('dev', body.checks.providers) === 'unavailable', CHECK_FRESH_MS + CHECK_TIMEOUT_MS + 3_000);
    const dev = stopped.body.checks.providers.find((provider) => provider.id === 'dev');
    expect(dev?.availability).toBe('unavailable');
    expect(dev?.error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(stopped.body.status).toBe('ready');
    expect((await fetch(`${gatehouse.url}/healthz`)).status).toBe(200);
    expect(availabilityOf('dev', (await providers()).body.providers)).toBe('unavailable');
    expect(availabilityOf('partner', (await providers()).body.providers)).toBe('available');
  });
});

/** The last JSON log line with this message. */
function logLine(output: string, msg: string): { service?: string; pid?: number; msg?: string } | undefined {
  const lines = output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as { service?: string; pid?: number; msg?: string }];
    } catch {
      return [];
    }
  });
  return lines.filter((line) => line.msg === msg).at(-1);
}

describe('npm start: a development IdP that dies', () => {
  let store: TestStore;
  let gatehouse: BuiltProcess | undefined;

  beforeAll(async () => {
    store = await createTestStore();
  });

  afterAll(async () => {
    await gatehouse?.stop();
    await removeTestStore(store);
  });

  it('is started again with backoff while the portal, the other IdP and the demo app keep serving', async () => {
    const [port, devPort, partnerPort, demoPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const config = {
      mode: 'development',
      publicUrl: `http://localhost:${port}`,
      listen: { host: '127.0.0.1', port },
      ...storeConfig(store),
      log: { level: 'info', format: 'json' },
      development: {
        idps: [
          { port: devPort, providerId: 'dev', name: 'Development IdP', users: 'default' },
          { port: partnerPort, providerId: 'partner', name: 'Partner IdP', users: 'partner' },
        ],
        demoApp: { port: demoPort },
      },
    };
    const file = path.join(store.dataDir, 'gatehouse.yaml');
    writeFileSync(file, JSON.stringify(config));
    gatehouse = startBuiltProcess(file);
    await gatehouse.waitFor('Gatehouse is ready', 40_000);

    // The process the portal started for the Development IdP, as its start line names it.
    const started = logLine(gatehouse.output(), 'dev-idp dev started');
    expect(started?.pid).toBeGreaterThan(0);

    process.kill(started!.pid!, 'SIGKILL');
    await gatehouse.waitFor('dev-idp dev stopped unexpectedly: starting it again in 1 s');
    // Everything else goes on meanwhile.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://localhost:${partnerPort}/.well-known/openid-configuration`)).status).toBe(200);
    expect((await fetch(`http://localhost:${demoPort}/`)).status).toBeLessThan(500);
    expect(gatehouse.child.exitCode).toBeNull();

    // Started again, and answering as before.
    await gatehouse.waitFor('dev-idp dev started again', 10_000);
    const back = await until(
      () => fetch(`http://localhost:${devPort}/.well-known/openid-configuration`).then((response) => response.status, () => 0),
      (status) => status === 200,
      15_000,
    );
    expect(back).toBe(200);

    // A second crash soon after waits twice as long.
    const restarted = logLine(gatehouse.output(), 'dev-idp dev started again');
    expect(restarted?.pid).toBeGreaterThan(0);
    expect(restarted?.pid).not.toBe(started?.pid);
    process.kill(restarted!.pid!, 'SIGKILL');
    await gatehouse.waitFor('dev-idp dev stopped unexpectedly: starting it again in 2 s');
    expect(gatehouse.child.exitCode).toBeNull();
  }, 90_000);
});
