import { routes } from '@gatehouse/contract';
import { queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';

/** `GET /api/consent/{uid}`: what a third-party app waiting for this session's consent asks. 404 when it is not (or no longer) waiting. */
export function getConsent(uid: string, { signal }: { signal?: AbortSignal } = {}) {
  return callApi(routes.consent.getConsent, { params: { uid }, signal });
}

export const consentQueryOptions = (uid: string) =>
  queryOptions({
    queryKey: ['consent', uid],
    queryFn: ({ signal }) => getConsent(uid, { signal }),
    // A step is answered once; a 404 will not turn into something else by asking again.
    retry: false,
    staleTime: Infinity,
  });

export function useConsent(uid: string) {
  return useQuery(consentQueryOptions(uid));
}

/** `POST /api/consent/{uid}/allow|deny`: the answer; the server says where the browser goes on (the app's authorization resumes there). */
export function answerConsent({ uid, allow }: { uid: string; allow: boolean }) {
  return callApi(allow ? routes.consent.allowConsent : routes.consent.denyConsent, { params: { uid } });
}

export function useAnswerConsent() {
  return useMutation({ mutationFn: answerConsent });
}
