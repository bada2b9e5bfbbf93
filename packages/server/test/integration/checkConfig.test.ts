import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN } from './support/builtProcess.js';
import { freePort } from '../support/ports.js';
import { startHostileIdp, type HostileIdp } from './support/hostileIdp.js';

/**
 * `gatehouse check-config` as an operator runs it: the built main.js (`npm run build` first), in the
 * directory of its file, with an environment of the test's own (no GATEHOUSE_* of the machine). Its
 * report is a compiler's (every problem, at its line and column, with the line and a caret, then a
 * count; exit 2 on any error); `--online` asks real IdPs on loopback: one that answers, one whose port
 * is closed, one that accepts connections and never answers.
 */

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;

function checkConfig(args: string[], env: Record<string, string> = {}, command = 'check-config'): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, command, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

function write(name: string, text: string): void {
  writeFileSync(path.join(dir, name), text);
}

const key = () => randomBytes(32).toString('base64');

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-check-config-'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('check-config on the built server', () => {
  it('a file with four faults: all four, each once, at its line and column with the line and a caret, then the count; exit 2', async () => {
    write(
      'gatehouse.yaml',
      `mode: production
publicUrl: https://login.example.com
trustedProxy: [10.0.0.1]
secrets:
  cookieKey: \${COOKIE_KEY}
  encryptionKeys:
    - { id: k1, key: "${key()}" }
providers:
  - id: corp
    name: Corp
    issuer: http://sso.example.com
    clientId: gatehouse
    clientSecret: \${CORP_SECRET}
`,
    );
    const { code, stdout, stderr } = await checkConfig([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      [
        'gatehouse.yaml:3:1: trustedProxy: unknown key (did you mean trustedProxies?)',
        '  3 | trustedProxy: [10.0.0.1]',
        '    | ^~~~~~~~~~~~',
        'gatehouse.yaml:5:14: secrets.cookieKey: environment variable COOKIE_KEY is not set',
        '  5 |   cookieKey: ${COOKIE_KEY}',
        '    |              ^~~~~~~~~~~~~',
        'gatehouse.yaml:11:13: providers[0].issuer: must be https (plain http is accepted only for loopback development IdPs)',
        ' 11 |     issuer: http://sso.example.com',
        '    |             ^~~~~~~~~~~~~~~~~~~~~~',
        'gatehouse.yaml:13:19: providers[0].clientSecret: environment variable CORP_SECRET is not set',
        ' 13 |     clientSecret: ${CORP_SECRET}',
        '    |                   ^~~~~~~~~~~~~~',
        'Invalid configuration (gatehouse.yaml): 4 errors.',
        '',
      ].join('\n'),
    );
  });

  it('a YAML syntax error: its place and the line, no dangling colon; exit 2', async () => {
    write('broken.yaml', 'providers:\n  - id: corp\n    name: Corp\n   issuer: https://sso.example.com\n');
    const { code, stderr } = await checkConfig(['--config', 'broken.yaml']);
    expect(code).toBe(2);
    expect(stderr).toBe(['broken.yaml:4:1: Sequence item without - indicator', ' 4 |    issuer: https://sso.example.com', '   | ^', 'Invalid configuration (broken.yaml): 1 error.', ''].join('\n'));
  });

  it('start refuses a broken file with the same report, before it starts anything', async () => {
    write('broken.yaml', 'providers:\n  - id: corp\n    name: Corp\n   issuer: https://sso.example.com\n');
    const { code, stdout, stderr } = await checkConfig(['--config', 'broken.yaml'], {}, 'start');
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toBe(['broken.yaml:4:1: Sequence item without - indicator', ' 4 |    issuer: https://sso.example.com', '   | ^', 'Invalid configuration (broken.yaml): 1 error.', ''].join('\n'));
  });

  it('keys the schema accepts but start would refuse (too short, not AES-256) are all named, at their lines', async () => {
    write(
      'keys.yaml',
      `mode: production
publicUrl: https://login.example.com
secrets:
  cookieKey: \${COOKIE_KEY}
  encryptionKeys:
    - { id: k1, key: "\${ENCRYPTION_KEY}" }
    - { id: k0, key: "${randomBytes(48).toString('base64')}" }
`,
    );
    const { code, stderr } = await checkConfig(['--config', 'keys.yaml'], { COOKIE_KEY: 'too-short', ENCRYPTION_KEY: key() });
    expect(code).toBe(2);
    expect(stderr).toContain('keys.yaml:4:14: secrets.cookieKey: must be at least 32 random bytes (base64 or hex)\n 4 |   cookieKey: ${COOKIE_KEY}\n');
    expect(stderr).toContain('keys.yaml:7:22: secrets.encryptionKeys[1].key: must be exactly 32 bytes (AES-256)\n 7 |     - { id: k0, key: *** }\n');
    expect(stderr).toContain('Invalid configuration (keys.yaml): 2 errors.');
    // Threat: a key's value in a CI log.
    expect(stderr).not.toContain('too-short');
  });

  it('a valid file: OK, with its trust warnings at their lines; exit 0', async () => {
    write(
      'valid.yaml',
      `publicUrl: http://localhost:4180
providers:
  - kind: github
    id: github
    name: GitHub
    clientId: Iv1.abc
    clientSecret: \${GITHUB_SECRET}
    allowedDomains: [example.com]
`,
    );
    const { code, stdout, stderr } = await checkConfig(['--config', 'valid.yaml'], { GITHUB_SECRET: 's' });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^valid\.yaml:8:21: warning: providers\[0\]\.allowedDomains: GitHub lets anyone verify any address/);
    expect(stdout).toContain(' 8 |     allowedDomains: [example.com]\n');
    expect(stdout).toMatch(/\nConfiguration OK \(valid\.yaml\): development mode, 1 provider\(s\), public URL http:\/\/localhost:4180, database SQLite .*; 1 warning\.\n$/);
  });
});

describe('check-config --online', () => {
  let answers: HostileIdp;
  let frozen: Server;
  const held: Socket[] = [];
  let file: string;

  beforeAll(async () => {
    answers = await startHostileIdp('gatehouse');
    const closedPort = await freePort();
    // Accepts connections and never answers: a frozen IdP.
    frozen = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', resolve));
    const frozenPort = (frozen.address() as { port: number }).port;
    file = 'online.yaml';
    write(
      file,
      `publicUrl: http://localhost:4180
providers:
  - id: answers
    name: Answers
    issuer: ${answers.issuer}
    clientId: gatehouse
    clientSecret: s
  - id: refuses
    name: Refuses
    issuer: http://127.0.0.1:${closedPort}
    clientId: gatehouse
    clientSecret: s
  - id: frozen
    name: Frozen
    issuer: http://127.0.0.1:${frozenPort}
    clientId: gatehouse
    clientSecret: s
  - id: off
    name: Turned off
    issuer: http://127.0.0.1:${closedPort}/off
    clientId: gatehouse
    clientSecret: s
    enabled: false
`,
    );
  });

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => (frozen ? frozen.close(() => resolve()) : resolve()));
    await answers?.close();
  });

  it('without --online nothing is asked: the file is valid', async () => {
    const { code, stdout } = await checkConfig(['--config', file]);
    expect(code).toBe(0);
    expect(stdout).not.toContain('warning');
  });

  it('warns at their issuers about the IdPs that do not answer (a closed port, a frozen one), not the one that does nor one turned off; exit 0', async () => {
    const { code, stdout, stderr } = await checkConfig(['--config', file, '--online']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const warnings = stdout.split('\n').filter((line) => line.includes(': warning: '));
    expect(warnings).toEqual([
      expect.stringMatching(/^online\.yaml:10:13: warning: providers\[1\]\.issuer: http:\/\/127\.0\.0\.1:\d+ did not answer \(.*ECONNREFUSED.*\); signing in with Refuses fails until it does \(Gatehouse keeps asking\)$/),
      expect.stringMatching(/^online\.yaml:15:13: warning: providers\[2\]\.issuer: http:\/\/127\.0\.0\.1:\d+ did not answer \(no answer within 5 s\); signing in with Frozen fails until it does \(Gatehouse keeps asking\)$/),
    ]);
    expect(stdout).toMatch(/\nConfiguration OK \(online\.yaml\): .*; 2 warnings\.\n$/);
  });

  it('--strict makes them errors: exit 2', async () => {
    const { code, stdout, stderr } = await checkConfig(['--config', file, '--online', '--strict']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('online.yaml:10:13: providers[1].issuer: http://127.0.0.1:');
    expect(stderr).toContain('Invalid configuration (online.yaml): 2 errors (--strict: warnings count as errors).');
  });

  it('the built-in defaults: the development IdPs start with Gatehouse, so there is nothing to ask before', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'gatehouse-check-config-defaults-'));
    try {
      const outcome = await new Promise<Outcome>((resolve) =>
        execFile(process.execPath, [MAIN, 'check-config', '--online'], { cwd: empty, env: { PATH: process.env.PATH ?? '' } }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
        ),
      );
      expect(outcome).toMatchObject({ code: 0, stderr: '' });
      expect(outcome.stdout).toMatch(/^Configuration OK \(built-in defaults\): development mode, 2 provider\(s\)/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
