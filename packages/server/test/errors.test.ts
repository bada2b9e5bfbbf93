import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError, catalogue, toAppError } from '../src/errors.js';
import { installErrorHandling } from '../src/http/errorHandler.js';

describe('error catalogue', () => {
  it('every code has a status, a title and a sentence for people', () => {
    for (const [code, entry] of Object.entries(catalogue)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.title.length, code).toBeGreaterThan(0);
      expect((entry.message as (p: object) => string)({}).length, code).toBeGreaterThan(10);
    }
  });

  it('fills in provider and reason', () => {
    expect(new AppError('provider_unavailable', { params: { provider: 'Corp SSO' } }).message).toBe(
      "We couldn't reach Corp SSO. Try again in a minute.",
    );
    expect(new AppError('sign_in_denied', { params: { provider: 'Corp SSO', reason: 'access_denied' } }).message).toBe(
      'Corp SSO did not sign you in: access_denied.',
    );
    // The IdP's own sentence keeps its one full stop: never "sign-in..".
    expect(new AppError('sign_in_denied', { params: { provider: 'Development IdP', reason: 'The user cancelled the sign-in.' } }).message).toBe(
      'Development IdP did not sign you in: The user cancelled the sign-in.',
    );
  });

  it('maps foreign errors by status, hiding their details', () => {
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 404 })).code).toBe('not_found');
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 400 })).code).toBe('bad_request');
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 429 })).code).toBe('rate_limited');
    const internal = toAppError(new Error('database password is hunter2'));
    expect(internal.code).toBe('internal');
    expect(internal.message).not.toContain('hunter2');
  });

  it("names each field a contract schema refused, as gatehouse.yaml's problems are named, and nothing else of the error", () => {
    const refused = Object.assign(new Error('body/allowedDomains/0 must be a domain such as example.com'), {
      statusCode: 400,
      validation: [
        { instancePath: '/allowedDomains/0', message: 'must be a domain such as example.com' },
        { instancePath: '/', message: 'must be one of oidc, google' },
        { instancePath: '/claims/email', message: 'Too small' },
      ],
    });
    expect(toAppError(refused).message).toBe(
      'The request could not be understood: allowedDomains[0]: must be a domain such as example.com; (root): must be one of oidc, google; claims.email: Too small.',
    );
    // Anything else (a parser's own error) says no more than before.
    expect(toAppError(Object.assign(new Error('Unexpected token } in JSON at 17'), { statusCode: 400 })).message).toBe('The request could not be understood.');
  });
});

describe('error responses', () => {
  async function app(stream?: Writable) {
    const fastify = Fastify({ genReqId: () => 'ref123', ...(stream ? { logger: { level: 'info', stream } } : {}) });
    installErrorHandling(fastify);
    fastify.get('/api/boom', async () => {
      throw new Error('secret stack detail');
    });
    fastify.get('/boom', async () => {
      throw new Error('secret stack detail');
    });
    fastify.get('/expired', async () => {
      throw new AppError('sign_in_expired');
    });
    fastify.get('/expired-because', async () => {
      throw new AppError('sign_in_expired', { cause: new TypeError('state mismatch') });
    });
    fastify.get('/suspended', async () => {
      throw new AppError('account_suspended');
    });
    fastify.get('/admin-only', async () => {
      throw new AppError('forbidden');
    });
    fastify.get('/denied', async () => {
      throw new AppError('sign_in_denied', { params: { provider: '<Corp>', reason: '<script>alert(1)</script>' } });
    });
    return fastify;
  }

  it('no error page is a dead end: suspended and admins-only pages lead somewhere, in the shared layout', async () => {
    const fastify = await app();
    const suspended = await fastify.inject({ url: '/suspended', headers: { accept: 'text/html' } });
    expect(suspended.statusCode).toBe(403);
    expect(suspended.body).toContain('<div class="actions"><a class="button" href="/sign-in">Back to sign-in</a></div>');
    const forbidden = await fastify.inject({ url: '/admin-only', headers: { accept: 'text/html' } });
    expect(forbidden.body).toContain('<a class="button" href="/">Back to your apps</a><a class="button secondary" href="/account">Your account</a>');
    // One layout for every page: the portal's header with its mark, one card that keeps a margin on a phone.
    for (const page of [suspended.body, forbidden.body]) {
      expect(page).toMatch(/<header><svg [^>]*aria-hidden="true">.*<\/svg><span>Gatehouse<\/span><\/header>/s);
      expect(page).toContain('main { width: min(560px, calc(100% - 32px));');
    }
  });

  it('API errors are problem+json with code and reference, never a stack', async () => {
    const response = await (await app()).inject('/api/boom');
    expect(response.statusCode).toBe(500);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = response.json();
    expect(body).toMatchObject({ status: 500, code: 'internal', reference: 'ref123' });
    expect(response.body).not.toContain('secret stack detail');
    expect(response.body).not.toMatch(/at .*\.ts/);
  });

  it('unknown API routes are problem+json 404', async () => {
    const response = await (await app()).inject('/api/nope');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found', reference: 'ref123' });
  });

  it('people get an HTML page with the message, code and reference', async () => {
    const response = await (await app()).inject({ url: '/expired', headers: { accept: 'text/html' } });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('This sign-in took too long or was already used. Start again.');
    expect(response.body).toContain('sign_in_expired');
    expect(response.body).toContain('ref123');
    expect(response.body).toContain('href="/sign-in"');
  });

  it('escapes what the IdP said (HTML injection)', async () => {
    const response = await (await app()).inject({ url: '/denied', headers: { accept: 'text/html' } });
    expect(response.body).not.toContain('<script>alert(1)</script>');
    expect(response.body).toContain('&#60;script&#62;');
  });

  it('logs a refusal without a stack trace, and a failure with one', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const fastify = await app(stream);
    await fastify.inject('/expired-because');
    await fastify.inject('/boom');
    const refusal = lines.find((line) => line.code === 'sign_in_expired');
    expect(refusal).toMatchObject({ level: 30, status: 400, reference: 'ref123', cause: { type: 'TypeError', message: 'state mismatch' } });
    expect(JSON.stringify(refusal)).not.toContain('stack');
    const failure = lines.find((line) => line.code === 'internal') as { level: number; err: { stack: string } };
    expect(failure.level).toBe(50);
    expect(failure.err.stack).toContain('secret stack detail');
  });

  it('internal errors show no detail on the page either', async () => {
    const response = await (await app()).inject({ url: '/boom', headers: { accept: 'text/html' } });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret stack detail');
  });
});

describe('a database that cannot be used right now', () => {
  // Threat: a database outage read as "no session" or, worse, as an allow; or its details shown.
  it('is store_unavailable (503, Retry-After), from a real SQLite lock held past the busy timeout', async () => {
    const { default: SQLite } = await import('better-sqlite3');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-busy-'));
    const file = path.join(dir, 'db');
    const holder = new SQLite(file);
    const other = new SQLite(file);
    try {
      holder.pragma('journal_mode = WAL');
      holder.exec('create table t (x integer)');
      other.pragma('busy_timeout = 0');
      holder.exec('begin exclusive');
      let busy: unknown;
      try {
        other.exec('insert into t values (1)');
      } catch (error) {
        busy = error;
      }
      expect((busy as { code?: string }).code).toBe('SQLITE_BUSY');
      const mapped = toAppError(busy);
      expect(mapped.code).toBe('store_unavailable');
      expect(mapped.status).toBe(503);
      expect(mapped.headers['retry-after']).toBe('5');
      holder.exec('rollback');
    } finally {
      holder.close();
      other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['08006', 'connection failure'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P03', 'the database system is starting up'],
    ['53300', 'too many connections'],
    ['57014', 'canceling statement due to statement timeout'],
  ])('is store_unavailable for PostgreSQL SQLSTATE %s (%s)', (code, message) => {
    expect(toAppError(Object.assign(new Error(message), { code, severity: 'FATAL' })).code).toBe('store_unavailable');
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'])('is store_unavailable when the socket fails (%s), also as a cause', (code) => {
    expect(toAppError(Object.assign(new Error('connect failed'), { code })).code).toBe('store_unavailable');
    expect(toAppError(new Error('query failed', { cause: Object.assign(new Error('x'), { code }) })).code).toBe('store_unavailable');
  });

  it('is store_unavailable when pg says the connection ended, and not for a query that is wrong', () => {
    expect(toAppError(new Error('Connection terminated unexpectedly')).code).toBe('store_unavailable');
    expect(toAppError(new Error('timeout exceeded when trying to connect')).code).toBe('store_unavailable');
    // A unique violation or a syntax error is a bug or a conflict, not an outage.
    expect(toAppError(Object.assign(new Error('duplicate key'), { code: '23505' })).code).toBe('internal');
    expect(toAppError(Object.assign(new Error('syntax error'), { code: '42601' })).code).toBe('internal');
    expect(toAppError(Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })).code).toBe('internal');
  });

  it('answers problem+json 503 without the driver’s words', async () => {
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    app.get('/api/x', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2'), { code: 'ECONNREFUSED' });
    });
    const answer = await app.inject({ method: 'GET', url: '/api/x' });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.json()).toMatchObject({ code: 'store_unavailable', status: 503 });
    expect(answer.body).not.toMatch(/10\.0\.0\.5|hunter2|ECONNREFUSED/);
  });
});
