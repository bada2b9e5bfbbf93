import { endpoints } from '@gatehouse/contract';
import { Button, type ButtonProps } from '@mantine/core';
import { IconLogout } from '@tabler/icons-react';
import { CsrfForm } from '../../../components/CsrfForm';

export interface SignOutButtonProps extends Pick<ButtonProps, 'variant' | 'color' | 'fullWidth'> {
  /**
   * End every session of this person, on every device, not just this one (the hidden field
   * `everywhere=true`). The server then goes through this session's IdP logout as usual.
   */
  everywhere?: boolean;
  /** The button's text; "Sign out" unless given. */
  label?: string;
}

/**
 * Signing out is a real HTML form post, not a fetch: the server ends the session, then redirects the
 * browser through the IdP's logout and back to /signed-out, which only a top-level navigation can follow.
 * The hidden `csrf_token` proves the post comes from this page (PRODUCT.md, "Cookies and trust"); the
 * button stays disabled until the token is here, so a post without it is never sent.
 */
export function SignOutButton({ everywhere = false, label = 'Sign out', variant = 'default', ...buttonProps }: SignOutButtonProps) {
  return (
    <CsrfForm
      action={endpoints.signOut}
      fields={everywhere ? { everywhere: 'true' } : {}}
      unavailableMessage="Signing out is not available right now. Reload the page and try again."
    >
      {(ready) => (
        <Button type="submit" variant={variant} leftSection={<IconLogout size={18} aria-hidden />} disabled={!ready} {...buttonProps}>
          {label}
        </Button>
      )}
    </CsrfForm>
  );
}
