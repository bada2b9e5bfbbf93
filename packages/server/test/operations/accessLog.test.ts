import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccessLog, type AccessLogEntry } from '../../src/operations/accessLog.js';

/**
 * The access log gathers lines and writes them in blocks (operations/accessLog.ts): what a stop closes must be
 * written whole, in order, one JSON object per line with the documented fields, and nothing it must
 * leave out (docs/operations/metrics.md, "Access log").
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-access-'));
  dirs.push(dir);
  return path.join(dir, 'logs', 'access.log');
}

const entry = (index: number, overrides: Partial<AccessLogEntry> = {}): AccessLogEntry => ({
  id: index.toString(16).padStart(12, '0'),
  area: 'proxy',
  method: 'GET',
  host: 'wiki.example.com',
  target: `/pages/${index}?code=secret-${index}`,
  user: { id: `user-${index}`, email: `person${index}@example.com` },
  app: 'wiki',
  decision: 'allowed',
  rule: 'allow[0]',
  status: 200,
  upstreamMs: 1.23456,
  totalMs: 2.5,
  ...overrides,
});

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the access log', () => {
  it('writes every line, in order, by the time it is closed: many blocks and a partial one', async () => {
    const file = logFile();
    const log = createAccessLog({ mode: 'production', accessLog: { destination: file, query: false, email: false } })!;
    // About 200 bytes a line: several 16 kB blocks and a last one that is not full.
    const count = 1_234;
    for (let index = 0; index < count; index++) log.write(entry(index));
    await log.close();

    const lines = readLines(file);
    expect(lines).toHaveLength(count);
    expect(lines.map((line) => line.requestId)).toEqual(Array.from({ length: count }, (_, index) => entry(index).id));
    expect(lines[7]).toEqual({
      log: 'access',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      requestId: entry(7).id,
      area: 'proxy',
      method: 'GET',
      host: 'wiki.example.com',
      path: '/pages/7',
      userId: 'user-7',
      app: 'wiki',
      decision: 'allowed',
      rule: 'allow[0]',
      status: 200,
      upstreamMs: 1.235,
      totalMs: 2.5,
    });
    // Threat: codes and tokens in query strings, and personal data, copied into every line of a log.
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('secret-');
    expect(text).not.toContain('@example.com');
  });

  it('on a quiet node, writes a line within a second rather than wait for a block to fill', async () => {
    const file = logFile();
    const log = createAccessLog({ mode: 'production', accessLog: { destination: file, query: false, email: false } })!;
    log.write(entry(1, { user: undefined, decision: 'unauthenticated', rule: 'none', status: 401, upstreamMs: undefined, app: '' }));
    await expect.poll(() => readLines(file), { timeout: 3_000 }).toHaveLength(1);
    expect(readLines(file)[0]).toMatchObject({ userId: null, app: null, decision: 'unauthenticated', status: 401, upstreamMs: null });
    await log.close();
  });

  it('writes the query and the email only when configured to, and a hostile value stays one line', async () => {
    const file = logFile();
    const log = createAccessLog({ mode: 'production', accessLog: { destination: file, query: true, email: true } })!;
    // Threat: a forged log line. The target is the client's own, quotes and line breaks included.
    log.write(entry(1, { target: '/x?q="\n{"log":"access","forged":true}' }));
    await log.close();
    const lines = readLines(file);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ path: '/x?q="\n{"log":"access","forged":true}', email: 'person1@example.com' });
  });

  it('is off in development unless asked for, and on in production unless turned off', () => {
    expect(createAccessLog({ mode: 'development', accessLog: { destination: 'stdout', query: false, email: false } })).toBeUndefined();
    expect(createAccessLog({ mode: 'production', accessLog: { enabled: false, destination: 'stdout', query: false, email: false } })).toBeUndefined();
  });
});
