import { routes } from '@gatehouse/contract';
import { useMutation } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';

/**
 * `POST /api/admin/providers/discover` `{ issuer }`: fetches the issuer's discovery document now.
 * Fails with `issuer_unreachable`, `issuer_invalid` or `bad_request` (plain http off loopback). A POST
 * run on demand, so a mutation.
 */
export function discoverIssuer(issuer: string) {
  return callApi(routes.admin.discoverProvider, { body: { issuer } });
}

export function useDiscoverIssuer() {
  return useMutation({ mutationFn: discoverIssuer });
}
