import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { installErrorHandling } from '../../src/http/errorHandler.js';
import { DebugRequestLogging, requestLogsAtLeast } from '../../src/operations/requestLogging.js';

/**
 * Request loggers and `log.level`: the root logger's level is what a reload changes (reload.ts), and
 * every request's logger must follow it, the quiet forward-auth routes' included.
 */
let lines: Array<{ level: number; msg: string; url?: string }>;
let root: pino.Logger;
let app: FastifyInstance;

beforeEach(async () => {
  lines = [];
  root = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
  app = Fastify({ loggerInstance: root as FastifyBaseLogger, logController: new DebugRequestLogging() });
  installErrorHandling(app);
  app.get('/portal/refused', async () => {
    throw new AppError('unauthenticated');
  });
  await app.register(async (quiet) => {
    requestLogsAtLeast(quiet, 'warn');
    quiet.get('/quiet/refused', async () => {
      throw new AppError('unauthenticated');
    });
    quiet.get('/quiet/failed', async () => {
      throw new Error('boom');
    });
  });
  await app.ready();
});
afterEach(async () => {
  await app.close();
});

async function logged(url: string): Promise<number[]> {
  const from = lines.length;
  await app.inject({ method: 'GET', url });
  return lines.slice(from).map((line) => line.level);
}

describe('request loggers of routes that log at warn and above', () => {
  it('leave out their refusals at info, keep their failures', async () => {
    expect(await logged('/quiet/refused')).toEqual([]);
    expect(await logged('/quiet/failed')).toContain(50);
    // Elsewhere, a refusal is logged at info.
    expect(await logged('/portal/refused')).toEqual([30]);
  });

  // Regression: a route's fixed logLevel 'warn' logged under log.level: silent, and never followed a reload.
  it('are never louder than the level in force, and follow it when it changes', async () => {
    root.level = 'silent';
    expect(await logged('/quiet/failed')).toEqual([]);
    expect(await logged('/portal/refused')).toEqual([]);
    root.level = 'error';
    expect(await logged('/quiet/failed')).toContain(50);
    root.level = 'debug';
    // At debug the others log each request; these stay at warn and above.
    expect(await logged('/quiet/refused')).toEqual([]);
    expect(await logged('/portal/refused')).toEqual([20, 30, 20]);
  });

  it("follow a level set on the root: the app's logger, made before, follows too", async () => {
    expect(app.log.level).toBe('info');
    root.level = 'debug';
    expect(app.log.level).toBe('debug');
    root.level = 'warn';
    expect(app.log.level).toBe('warn');
  });
});
