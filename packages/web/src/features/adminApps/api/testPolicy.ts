import { useMutation } from '@tanstack/react-query';
import { apiPaths } from '../../../config/paths';
import { apiClient } from '../../../lib/apiClient';

/** Typed-in claims to test a policy against, instead of a real user. */
export interface PolicySubject {
  email: string;
  groups: string[];
  roles: string[];
  claims: Record<string, unknown>;
}

export type PolicyTestRequest = { appId: string; userId: string } | { appId: string; subject: PolicySubject };

export interface PolicyTestResult {
  allow: boolean;
  /** "allowed by allow[0]: groups staff", "denied: no allow rule matched", "denied by deny[0]: …". */
  reason: string;
  decidedBy: unknown;
  /** Who was tested (for a user: their email, groups, roles and claims as last reported). */
  subject: PolicySubject;
}

/**
 * `POST /api/admin/policy-test`: would this person reach the app under its saved policy, and which rule
 * decides. A POST that changes nothing, so a mutation (run on demand), not a query.
 */
export function testPolicy(request: PolicyTestRequest): Promise<PolicyTestResult> {
  return apiClient.post<PolicyTestResult>(apiPaths.admin.policyTest, request);
}

export function useTestPolicy() {
  return useMutation({ mutationFn: testPolicy });
}
