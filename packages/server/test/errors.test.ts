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
  });

  it('maps foreign errors by status, hiding their details', () => {
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 404 })).code).toBe('not_found');
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 400 })).code).toBe('bad_request');
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 429 })).code).toBe('rate_limited');
    const internal = toAppError(new Error('database password is hunter2'));
    expect(internal.code).toBe('internal');
    expect(internal.message).not.toContain('hunter2');
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
    fastify.get('/denied', async () => {
      throw new AppError('sign_in_denied', { params: { provider: '<Corp>', reason: '<script>alert(1)</script>' } });
    });
    return fastify;
  }

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
