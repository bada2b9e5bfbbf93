import * as client from 'openid-client';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';

/** What a failure is about, for the sentence an admin reads: the client Gatehouse is registered as, and its redirect URI. */
export interface OidcErrorContext {
  /** Our redirect URI as sent in this request (the authorization request or the code's redemption). */
  redirectUri?: string | undefined;
}

type ProviderNames = Pick<ProviderConfig, 'name' | 'clientId'> & { scopes?: readonly string[] };

/**
 * Maps openid-client's failures to the catalogue: Gatehouse's registration at the IdP is wrong, the IdP
 * said no, the IdP is unreachable, or its answer is not trusted.
 */
export function fromOidcError(error: unknown, provider: ProviderNames, context: OidcErrorContext = {}): AppError {
  const params = { provider: provider.name };
  if (error instanceof AppError) return error;
  const misconfigured = configurationError(error, provider, context);
  if (misconfigured) return misconfigured;
  if (error instanceof client.AuthorizationResponseError) {
    // The IdP's own words (error_description) are shown, bounded and as text only (escaped on render).
    const reason = printable(error.error_description || error.error);
    return new AppError('sign_in_denied', { params: { ...params, reason }, cause: error });
  }
  // Unreachable, or up but failing (5xx): the IdP is unavailable, not lying.
  if (isNetworkError(error) || serverErrorStatus(error)) return new AppError('provider_unavailable', { params, cause: error });
  return new AppError('invalid_response', { params, cause: error });
}

/**
 * The OAuth error an IdP answered with, wherever it came: the body of a PAR or token endpoint answer
 * (RFC 6749 §5.2, RFC 9126 §2.3: ResponseBodyError), a WWW-Authenticate challenge on a 401 (some IdPs
 * answer invalid_client so), or the authorization response (§4.1.2.1: AuthorizationResponseError).
 */
export function oauthErrorOf(error: unknown): { error: string; description: string } | undefined {
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    return { error: error.error, description: error.error_description ?? '' };
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const parameters = error.cause.find((challenge) => challenge.parameters.error)?.parameters;
    if (parameters?.error) return { error: parameters.error, description: parameters.error_description ?? '' };
  }
  return undefined;
}

/**
 * An IdP's answer that says Gatehouse's registration there is wrong — not that the IdP is down, nor that
 * the person was refused: the client secret (or key) or client id (`invalid_client`; GitHub's
 * `incorrect_client_credentials`), an unregistered redirect URI (`invalid_redirect_uri`, RFC 9126 §2.3;
 * `invalid_request` about `redirect_uri`; GitHub's `redirect_uri_mismatch`), a client not allowed the
 * code flow (`unauthorized_client`) or scopes it may not ask for (`invalid_scope`). It is
 * `provider_misconfigured`, with the fix for admins (`fix`: logged and shown in the console's test
 * sign-in, never to the person). Never a secret in it: the client id and redirect URI are public.
 */
export function configurationError(error: unknown, provider: ProviderNames, context: OidcErrorContext = {}): AppError | undefined {
  const answer = oauthErrorOf(error);
  if (!answer) return undefined;
  const fix = configurationFix(answer, provider, context);
  return fix ? new AppError('provider_misconfigured', { params: { provider: provider.name }, fix, cause: error }) : undefined;
}

function configurationFix({ error, description }: { error: string; description: string }, provider: ProviderNames, { redirectUri }: OidcErrorContext): string | undefined {
  const said = `${provider.name} answered ${error}${description ? ` ("${printable(description)}")` : ''}`;
  const client = `client "${printable(provider.clientId)}"`;
  switch (error) {
    case 'invalid_client':
    case 'incorrect_client_credentials':
      return `${said}: it does not accept Gatehouse's client credentials. Check the client secret (or private key) and the client ID (${client}) configured for this provider against the ones registered at the provider`;
    case 'unauthorized_client':
      return `${said}: ${client} may not sign people in this way. Allow it the authorization code grant at the provider`;
    case 'invalid_scope':
      return `${said}: ${client} may not ask for the scopes ${provider.scopes?.join(' ') ?? 'it asked for'}. Allow them at the provider, or remove the ones it does not offer from this provider's scopes`;
    case 'invalid_redirect_uri':
    case 'redirect_uri_mismatch':
      return redirectFix(said, client, redirectUri);
    case 'invalid_request':
      return /redirect_uri/i.test(description) ? redirectFix(said, client, redirectUri) : undefined;
    default:
      return undefined;
  }
}

function redirectFix(said: string, client: string, redirectUri: string | undefined): string {
  return `${said}: it does not accept Gatehouse's redirect URI. Register ${redirectUri ?? "this provider's callback URL"} exactly as a redirect URI of ${client} at the provider`;
}

/** An IdP's words, bounded and printable, for a log line or a page (escaped on render). */
export function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
}

export function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return true;
  // fetch() rejects with TypeError("fetch failed") and the socket error as its cause.
  if (error instanceof TypeError && error.message === 'fetch failed') return true;
  return error.cause instanceof Error && error.cause !== error && isNetworkError(error.cause);
}

function serverErrorStatus(error: unknown): boolean {
  if (error instanceof client.ResponseBodyError) return error.status >= 500;
  const response = (error as { cause?: unknown } | undefined)?.cause;
  return response instanceof Response && response.status >= 500;
}
