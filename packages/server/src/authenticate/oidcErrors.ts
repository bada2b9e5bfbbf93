import * as client from 'openid-client';
import type { ProviderConfig } from '../config/schema.js';
import { AppError } from '../errors.js';

/** Maps openid-client's failures to the catalogue: IdP said no, IdP unreachable, or answer not trusted. */
export function fromOidcError(error: unknown, provider: Pick<ProviderConfig, 'name'>): AppError {
  const params = { provider: provider.name };
  if (error instanceof AppError) return error;
  if (error instanceof client.AuthorizationResponseError) {
    // The IdP's own words (error_description) are shown, bounded and as text only (escaped on render).
    const reason = (error.error_description || error.error).replace(/[^\x20-\x7e]/g, '').slice(0, 200);
    return new AppError('sign_in_denied', { params: { ...params, reason }, cause: error });
  }
  // Unreachable, or up but failing (5xx): the IdP is unavailable, not lying.
  if (isNetworkError(error) || serverErrorStatus(error)) return new AppError('provider_unavailable', { params, cause: error });
  return new AppError('invalid_response', { params, cause: error });
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
