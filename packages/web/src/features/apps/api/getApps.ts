import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';

/** One app the signed-in person may open, as `GET /api/apps` lists it. */
export interface LauncherApp {
  /** The app's id in the configuration (`whoami`). */
  id: string;
  /** Its display name (`Whoami`). */
  name: string;
  /** Where it lives, at its own host (`http://whoami.localhost:4180/`); opened by a plain link. */
  url: string;
}

export interface AppsResponse {
  apps: LauncherApp[];
}

/** `GET /api/apps`: only the apps the signed-in person may open (401 when signed out). */
export async function getApps({ signal }: { signal?: AbortSignal } = {}): Promise<AppsResponse> {
  const body = await apiClient.get<AppsResponse>(apiPaths.apps, signal ? { signal } : {});
  return { apps: Array.isArray(body?.apps) ? body.apps : [] };
}

export const appsQueryOptions = () =>
  queryOptions({
    queryKey: ['apps'],
    queryFn: ({ signal }) => getApps({ signal }),
  });

export function useApps() {
  return useQuery(appsQueryOptions());
}
