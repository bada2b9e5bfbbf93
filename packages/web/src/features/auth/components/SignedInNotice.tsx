import { DEFAULT_RETURN_TO, type CurrentSession, type ReturnTo } from '@gatehouse/contract';
import { Alert, Anchor, Text } from '@mantine/core';
import { IconCircleCheck } from '@tabler/icons-react';

export interface SignedInNoticeProps {
  current: CurrentSession;
  /** The server's verdict on where the person was headed (never the raw `rd`). */
  returnTo: ReturnTo;
}

/** Shown on the sign-in page to someone who already has a session: where to go instead. */
export function SignedInNotice({ current, returnTo }: SignedInNoticeProps) {
  const who = current.user.name || current.user.email;
  const { href, host } = returnTo;
  return (
    <Alert color="blue" title="You are already signed in" icon={<IconCircleCheck aria-hidden />}>
      <Text size="sm">
        You are signed in as {who}
        {current.user.name && current.user.email ? ` (${current.user.email})` : ''}.
      </Text>
      <Text size="sm" mt={4}>
        {/* A full page load: the destination may be a page the server renders, or an app at its own host. */}
        {/* The text colour and an underline: the anchor blue on the alert's light blue is below 4.5:1. */}
        <Anchor href={href} fw={600} inherit c="inherit" underline="always">
          {href === DEFAULT_RETURN_TO ? 'Continue to your account' : host ? `Continue to ${host}` : 'Continue'}
        </Anchor>
      </Text>
    </Alert>
  );
}
