import { pages, signInErrorCodes, signInFailureCodes, signInNoticeCodes } from '@gatehouse/contract';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError, catalogue, refusalCodes, type ErrorCode } from '../src/errors.js';
import { installErrorHandling } from '../src/http/errorHandler.js';

/**
 * The sign-in page explains the codes the contract lists (`signInErrorCodes`) and nothing else; the
 * server's catalogue is where the codes come from. The two must agree, or a person lands on the sign-in
 * page with a code it words generically, or the page words a code the server no longer has.
 */

// Checked by the compiler too: a failure code the catalogue does not have does not type-check here.
const failureCodes: readonly ErrorCode[] = signInFailureCodes;

describe('the sign-in error codes of the contract and the error catalogue', () => {
  it('every failure code the sign-in page explains is a code of the catalogue', () => {
    for (const code of failureCodes) expect(Object.hasOwn(catalogue, code), code).toBe(true);
  });

  it('a notice is not an error of the catalogue, and no code is listed twice', () => {
    for (const code of signInNoticeCodes) expect(Object.hasOwn(catalogue, code), code).toBe(false);
    expect(new Set(signInErrorCodes).size).toBe(signInErrorCodes.length);
  });

  it('every code a refused sign-in is answered with is one the sign-in page explains', () => {
    for (const code of new Set(Object.values(refusalCodes))) expect(signInErrorCodes, code).toContain(code);
  });

  it('every code whose error page leads back to the sign-in page is one the sign-in page explains', async () => {
    const app = Fastify();
    installErrorHandling(app);
    app.get<{ Params: { code: ErrorCode } }>('/fail/:code', async (request) => {
      throw new AppError(request.params.code);
    });
    const toSignIn: string[] = [];
    for (const code of Object.keys(catalogue) as ErrorCode[]) {
      const page = await app.inject({ url: `/fail/${code}`, headers: { accept: 'text/html' } });
      expect(page.statusCode, code).toBe(catalogue[code].status);
      if (page.body.includes(`href="${pages.signIn.path}"`)) toSignIn.push(code);
    }
    // The page's own links, found by rendering them: the test sees what a person would follow.
    expect(toSignIn).toContain('sign_in_expired');
    for (const code of toSignIn) expect(signInErrorCodes, code).toContain(code);
    await app.close();
  });
});
