import type { FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';

import type { VerifyAssertion } from './verifyAssertion.js';

/** The headers Gatehouse sets on every request it forwards, in display order. */
export const IDENTITY_HEADERS = [
  'X-Gatehouse-User',
  'X-Gatehouse-Email',
  'X-Gatehouse-Name',
  'X-Gatehouse-Groups',
  'X-Gatehouse-Assertion',
] as const;

export type AssertionReport =
  | { status: 'not_configured' }
  | { status: 'absent' }
  | { status: 'verified'; claims: JWTPayload }
  | { status: 'invalid'; reason: string };

/** What the demo app tells about a request, as JSON or as the HTML page. */
export interface WhoamiReport {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  identity: { user: string | null; email: string | null; name: string | null; groups: string[] | null };
  assertion: AssertionReport;
}

export interface AssertionCheck {
  verify: VerifyAssertion;
  /**
   * The app's public origin. Without it the audience is taken from the request: the scheme and host
   * Gatehouse forwards (X-Forwarded-Proto/-Host from a loopback peer), else Host. That is what the
   * demo needs to work under any app that points at it, but it lets an assertion addressed to another
   * app be replayed here by someone who can reach the demo directly with a forged header. A real app
   * configures its origin.
   */
  audience?: string;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

async function checkAssertion(request: FastifyRequest, check: AssertionCheck | undefined): Promise<AssertionReport> {
  if (!check) return { status: 'not_configured' };
  const assertion = header(request, 'x-gatehouse-assertion');
  if (assertion === undefined) return { status: 'absent' };
  const audience = check.audience ?? `${request.protocol}://${request.host}`;
  try {
    return { status: 'verified', claims: await check.verify(assertion, audience) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return { status: 'invalid', reason: typeof code === 'string' ? `${code}: ${message}` : message };
  }
}

export async function whoami(request: FastifyRequest, check: AssertionCheck | undefined): Promise<WhoamiReport> {
  const groups = header(request, 'x-gatehouse-groups');
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    identity: {
      user: header(request, 'x-gatehouse-user') ?? null,
      email: header(request, 'x-gatehouse-email') ?? null,
      name: header(request, 'x-gatehouse-name') ?? null,
      // Comma-separated, as Gatehouse sends them.
      groups: groups === undefined ? null : groups.split(',').map((group) => group.trim()).filter(Boolean),
    },
    assertion: await checkAssertion(request, check),
  };
}
