import { routes, type ClientSecret, type CreatedClientSecret } from '@gatehouse/contract';
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';
import { adminQueryKeys } from '../../../lib/queryKeys';

const secretsKey = (appId: string) => [...adminQueryKeys.apps, appId, 'secrets'] as const;

/** `GET /api/admin/apps/{id}/secrets`: a console app's live client secrets (hints, never the secrets). */
export async function getClientSecrets(appId: string, { signal }: { signal?: AbortSignal } = {}): Promise<ClientSecret[]> {
  const { secrets } = await callApi(routes.admin.listClientSecrets, { params: { appId }, signal });
  return secrets;
}

export const clientSecretsQueryOptions = (appId: string) =>
  queryOptions({
    queryKey: secretsKey(appId),
    queryFn: ({ signal }) => getClientSecrets(appId, { signal }),
  });

export function useClientSecrets(appId: string, enabled: boolean) {
  return useQuery({ ...clientSecretsQueryOptions(appId), enabled });
}

/**
 * `POST /api/admin/apps/{id}/secrets` (201): a new secret, in this answer only. 409
 * `client_secret_limit` while two are live. The answer is kept by the caller alone, never in a cache.
 */
export function useCreateClientSecret(appId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (): Promise<CreatedClientSecret> => callApi(routes.admin.createClientSecret, { params: { appId } }),
    // The list (by hint) and the audit log change; the secret itself stays in the mutation's answer.
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
  });
}

/** `DELETE /api/admin/apps/{id}/secrets/{secretId}` (204): it authenticates nothing from now on. */
export function useRevokeClientSecret(appId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (secretId: string) => callApi(routes.admin.revokeClientSecret, { params: { appId, secretId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: adminQueryKeys.all }),
  });
}
