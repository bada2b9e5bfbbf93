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
