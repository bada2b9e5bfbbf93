import { Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { useCsrfToken } from '../lib/csrf';

export interface CsrfFormProps {
  /** A server endpoint reached by a top-level form post (see the contract's `endpoints`). */
  action: string;
  /** More hidden fields, posted as they are (`everywhere=true`). */
  fields?: Record<string, string>;
  /**
   * The form's visible part, usually its submit button; `ready` is false until the token is here, and
   * the submit button should stay disabled until then, so a post without a token is never sent.
   */
  children: (ready: boolean) => ReactNode;
  /** Shown (as an alert) when the token could not be fetched. */
  unavailableMessage?: string;
}

/**
 * A real HTML form post to one of the server's own endpoints (sign out, link a provider) carrying the
 * session-bound `csrf_token` as a hidden field. It is a navigation, not a fetch, because the server
 * answers with redirects through an IdP that only a top-level page can follow; the token proves the
 * post comes from this page, since SameSite alone does not (PRODUCT.md, "Cookies and trust").
 */
export function CsrfForm({ action, fields = {}, children, unavailableMessage = 'This is not available right now. Reload the page and try again.' }: CsrfFormProps) {
  const csrf = useCsrfToken();
  return (
    <form method="post" action={action}>
      <input type="hidden" name="csrf_token" value={csrf.data ?? ''} />
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children(Boolean(csrf.data))}
      {csrf.isError && (
        <Text size="sm" c="red" mt="xs" role="alert">
          {unavailableMessage}
        </Text>
      )}
    </form>
  );
}
