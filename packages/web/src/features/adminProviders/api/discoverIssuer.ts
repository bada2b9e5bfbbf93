import { useMutation } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';

/** What an issuer's discovery document says, as the server summarised it. */
export interface DiscoveryPreview {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string | null;
  endSessionEndpoint: string | null;
  jwksUri: string;
  scopesSupported: string[];
  claimsSupported: string[];
  codeChallengeMethodsSupported: string[];
  /** `not-advertised`: PKCE is still sent; `unsupported`: the provider cannot be saved. */
  pkce: 'S256' | 'not-advertised' | 'unsupported';
  pushedAuthorizationRequests: 'required' | 'supported' | 'no';
  backchannelLogout: boolean;
  idTokenSigningAlgValuesSupported: string[];
  tokenEndpointAuthMethodsSupported: string[];
}

/**
 * `POST /api/admin/providers/discover` `{ issuer }`: fetches the issuer's discovery document now.
 * Fails with `issuer_unreachable`, `issuer_invalid` or `bad_request` (plain http off loopback). A POST
 * run on demand, so a mutation.
 */
export function discoverIssuer(issuer: string): Promise<DiscoveryPreview> {
  return apiClient.post<DiscoveryPreview>(apiPaths.admin.discoverProvider, { issuer });
}

export function useDiscoverIssuer() {
  return useMutation({ mutationFn: discoverIssuer });
}
