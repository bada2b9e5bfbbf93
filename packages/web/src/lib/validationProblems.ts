import { isApiError } from './apiClient';

/**
 * The server's 400 detail ("The request could not be understood: policy.allow[0].roles[0]: must be one
 * of: admin; name: Too small") as one line per problem; any other text stays one line.
 */
export function validationProblems(detail: string | undefined): string[] {
  if (!detail) return [];
  const match = /^[^:]*could not be understood:\s*(.*)$/is.exec(detail);
  if (!match?.[1]) return [detail];
  return match[1]
    .replace(/\.\s*$/, '')
    .split(/;\s+/)
    .map((problem) => problem.trim())
    .filter(Boolean);
}

/** The sentence of a 409 `conflict` about `field` (an id or a host another item has), if that is how a save failed. */
export function conflictOn(error: unknown, field: string): string | undefined {
  return isApiError(error) && error.status === 409 && error.code === 'conflict' && error.field === field ? error.detail : undefined;
}

/**
 * A failed save's problems as "field: message" lines, to place beside the fields: a 400's detail, one
 * line per problem; a 409 `conflict` (an id or a host another item has) on the field it names. Any other
 * failure has none (it is shown whole, above the form).
 */
export function fieldProblems(error: unknown): string[] {
  if (!isApiError(error)) return [];
  if (error.status === 400) return validationProblems(error.detail);
  const conflict = error.field === undefined ? undefined : conflictOn(error, error.field);
  return conflict ? [`${error.field}: ${conflict}`] : [];
}
