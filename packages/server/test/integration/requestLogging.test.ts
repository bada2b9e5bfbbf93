import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatehouse, type RunningGatehouse } from './support/gatehouse.js';
import { logLines } from './support/logLines.js';

/**
 * The log at info is for what happened, not for every request: Fastify's "incoming request" and
 * "request completed" lines are at debug (the access log records requests), while a refusal or an
 * error keeps its own line at its level.
 */
let gatehouse: RunningGatehouse;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  gatehouse = await startGatehouse({
    logStream: logLines(lines),
  });
});

afterAll(async () => {
  await gatehouse?.close();
});

/** The lines written from now until `work` is done (pino writes synchronously to this stream). */
async function linesDuring(work: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const from = lines.length;
  await work();
  return lines.slice(from);
}

describe('request logging', () => {
  it('writes no info line for normal requests', async () => {
    const written = await linesDuring(async () => {
      for (const path of ['/sign-in', '/api/providers', '/healthz', '/.gatehouse/jwks.json']) {
        const response = await fetch(`${gatehouse.url}${path}`);
        await response.arrayBuffer();
      }
    });
    expect(written.filter((line) => (line.level as number) >= 30)).toEqual([]);
  });

  it('still logs a refusal at info, with its code and reference', async () => {
    const written = await linesDuring(async () => {
      const response = await fetch(`${gatehouse.url}/api/me/sessions`);
      expect(response.status).toBe(401);
      await response.arrayBuffer();
    });
    expect(written).toEqual([expect.objectContaining({ level: 30, code: 'unauthenticated', reference: expect.any(String) })]);
  });

  // Regression: every anonymous visit's GET /api/session wrote "You are not signed in." at info.
  it("logs the session check's expected 401 at debug only, with or without a cookie", async () => {
    const ask = async (headers: Record<string, string>) => {
      const response = await fetch(`${gatehouse.url}/api/session`, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'unauthenticated', reference: expect.any(String) });
    };
    const atInfo = await linesDuring(async () => {
      await ask({});
      await ask({ cookie: `gatehouse_session=${'x'.repeat(43)}` });
    });
    expect(atInfo.filter((line) => (line.level as number) >= 30)).toEqual([]);

    // Still there for whoever turns debug on.
    gatehouse.app.log.level = 'debug';
    try {
      const atDebug = await linesDuring(() => ask({}));
      expect(atDebug).toContainEqual(expect.objectContaining({ level: 20, code: 'unauthenticated', msg: 'You are not signed in.' }));
    } finally {
      gatehouse.app.log.level = 'info';
    }
  });
});

describe('the session check when the database fails', () => {
  let broken: RunningGatehouse;
  const brokenLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    broken = await startGatehouse({ logStream: logLines(brokenLines) });
  });
  afterAll(async () => {
    await broken?.close().catch(() => undefined);
  });

  it('is a real failure, and keeps its level', async () => {
    await broken.services.database.close();
    // A well-formed cookie is looked up in the store, which is gone.
    const response = await fetch(`${broken.url}/api/session`, { headers: { cookie: `gatehouse_session=${'y'.repeat(43)}` } });
    expect(response.status).toBeGreaterThanOrEqual(500);
    await response.arrayBuffer();
    expect(brokenLines).toContainEqual(expect.objectContaining({ level: 50, reference: expect.any(String) }));
  });
});
