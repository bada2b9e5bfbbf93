import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SigningKeys } from './signingKeys.js';

export interface JwksDeps {
  signingKeys: Pick<SigningKeys, 'publicJwks'>;
}

/**
 * `GET /.gatehouse/jwks.json`: the public keys apps verify the assertion (X-Gatehouse-Assertion) with,
 * on the portal and on every app host alike. Cached for five minutes (a retired key stays published
 * for longer than that: keys/signingKeys.ts).
 */
export function jwks({ signingKeys }: JwksDeps) {
  return async function handler(_request: FastifyRequest, reply: FastifyReply) {
    return reply.header('cache-control', 'public, max-age=300').send(signingKeys.publicJwks());
  };
}
