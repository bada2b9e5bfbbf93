import { Alert, List } from '@mantine/core';
import { IconAlertCircle } from '@tabler/icons-react';
import { isApiError } from '../lib/apiClient';
import { validationProblems } from '../lib/validationProblems';

/**
 * Why a form could not be saved: the server's problems field by field (a 400 names each one), or the
 * form's own checks (`problems`), or a general sentence for anything unexpected.
 */
export function SaveError({ title, error, problems: local }: { title: string; error: unknown; problems?: string[] }) {
  const detail = isApiError(error) ? (error.detail ?? error.title) : 'Something unexpected happened.';
  const problems = local ?? validationProblems(detail);
  return (
    <Alert color="red" title={title} icon={<IconAlertCircle aria-hidden />} role="alert">
      {problems.length > 1 ? (
        <List size="sm" spacing={4}>
          {problems.map((problem) => (
            <List.Item key={problem}>{problem}</List.Item>
          ))}
        </List>
      ) : (
        problems[0]
      )}
    </Alert>
  );
}
