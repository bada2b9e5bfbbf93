import { Alert, Button, Stack, Text } from '@mantine/core';
import { IconAlertCircle } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { isApiError } from '../lib/apiClient';

export interface ProblemAlertProps {
  /** What failed, in the page's words ("We couldn't load the sign-in options"). */
  title: string;
  error: unknown;
  /** Offers a "Try again" button when given. */
  onRetry?: () => void;
  children?: ReactNode;
}

/**
 * A failed request, shown as the server explained it: the problem's detail and its reference id, which
 * is also in the server log. Errors that are not ours get a plain sentence; no stack trace is shown.
 */
export function ProblemAlert({ title, error, onRetry, children }: ProblemAlertProps) {
  const detail = isApiError(error) ? (error.detail ?? error.title) : 'Something unexpected happened.';
  const reference = isApiError(error) ? error.reference : undefined;
  return (
    <Alert color="red" title={title} icon={<IconAlertCircle aria-hidden />} role="alert">
      <Stack gap="xs">
        <Text size="sm">{detail}</Text>
        {reference && <Text size="sm">Reference: {reference}</Text>}
        {children}
        {onRetry && (
          <div>
            <Button size="xs" variant="default" onClick={onRetry}>
              Try again
            </Button>
          </div>
        )}
      </Stack>
    </Alert>
  );
}
