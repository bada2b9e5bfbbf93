import { routes, type BodyOf, type ResponseOf } from '@gatehouse/contract';
import { useMutation } from '@tanstack/react-query';
import { callApi } from '../../../lib/apiClient';

/** `{ appId, userId }` or `{ appId, subject }` (typed-in claims instead of a real user). */
export type PolicyTestRequest = BodyOf<typeof routes.admin.testPolicy>;
/** The verdict, the rule that decided it and what the policy was evaluated against. */
export type PolicyTestResult = ResponseOf<typeof routes.admin.testPolicy>;

/**
 * `POST /api/admin/policy-test`: would this person reach the app under its saved policy, and which rule
 * decides. A POST that changes nothing, so a mutation (run on demand), not a query.
 */
export function testPolicy(request: PolicyTestRequest) {
  return callApi(routes.admin.testPolicy, { body: request });
}

export function useTestPolicy() {
  return useMutation({ mutationFn: testPolicy });
}
