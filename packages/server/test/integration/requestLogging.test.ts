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
      const response = await fetch(`${gatehouse.url}/api/session`);
      expect(response.status).toBe(401);
      await response.arrayBuffer();
    });
    expect(written).toEqual([expect.objectContaining({ level: 30, code: 'unauthenticated', reference: expect.any(String) })]);
  });
});
