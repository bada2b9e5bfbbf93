import type { z } from 'zod';

/** Validation problems as people read them: `apps[0].upstream: must be an absolute http(s) URL`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${formatPath(issue.path) || '(root)'}: ${issue.message}`);
}

function formatPath(segments: readonly PropertyKey[]): string {
  return segments.reduce<string>((out, segment) => {
    if (typeof segment === 'number') return `${out}[${segment}]`;
    return out ? `${out}.${String(segment)}` : String(segment);
  }, '');
}
