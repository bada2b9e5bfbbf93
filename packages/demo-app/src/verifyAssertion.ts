/**
 * Verifying Gatehouse's identity assertion in an app behind it. Copy this file: it needs only `jose`.
 *
 * Gatehouse sends every request it lets through with `X-Gatehouse-Assertion`, a short-lived JWT
 * signed with ES256, issued by Gatehouse and addressed (`aud`) to the app's own origin. The plain
 * `X-Gatehouse-*` headers are convenient, but only a verified assertion proves the request came
 * through Gatehouse and not from someone who can reach the app directly.
 */
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export interface AssertionVerifierOptions {
  /** Gatehouse's key set, e.g. `https://whoami.example.com/.gatehouse/jwks.json`. */
  jwksUrl: string;
  /** Gatehouse's issuer identifier, compared exactly with the `iss` claim. */
  issuer: string;
}

/** Verifies an assertion for an audience (the app's origin) and returns its claims, or throws why not. */
export type VerifyAssertion = (assertion: string, audience: string) => Promise<JWTPayload>;

export function createAssertionVerifier({ jwksUrl, issuer }: AssertionVerifierOptions): VerifyAssertion {
  // Fetched on first use, cached, and fetched again when a token names an unknown key (key rotation).
  const keys = createRemoteJWKSet(new URL(jwksUrl));
  return async (assertion, audience) => {
    const { payload } = await jwtVerify(assertion, keys, {
      issuer,
      // The audience stops an assertion minted for another app from being replayed against this one.
      audience,
      // Fixed, never taken from the token header: no "none", no algorithm confusion (RFC 8725 §3.1).
      algorithms: ['ES256'],
      // An assertion without expiry would be valid forever if it leaked.
      requiredClaims: ['exp'],
    });
    return payload;
  };
}
