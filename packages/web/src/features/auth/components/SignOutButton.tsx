import { Button, Text } from '@mantine/core';
import { IconLogout } from '@tabler/icons-react';
import { serverPaths } from '../../../config/paths';
import { useCsrfToken } from '../../../lib/csrf';

/**
 * Signing out is a real HTML form post, not a fetch: the server ends the session, then redirects the
 * browser through the IdP's logout and back to /signed-out, which only a top-level navigation can follow.
 * The hidden `csrf_token` proves the post comes from this page (PRODUCT.md, "Cookies and trust"); the
 * button stays disabled until the token is here, so a post without it is never sent.
 */
export function SignOutButton() {
  const csrf = useCsrfToken();
  return (
    <form method="post" action={serverPaths.signOut}>
      <input type="hidden" name="csrf_token" value={csrf.data ?? ''} />
      <Button type="submit" variant="default" leftSection={<IconLogout size={18} aria-hidden />} disabled={!csrf.data}>
        Sign out
      </Button>
      {csrf.isError && (
        <Text size="sm" c="red" mt="xs" role="alert">
          Signing out is not available right now. Reload the page and try again.
        </Text>
      )}
    </form>
  );
}
