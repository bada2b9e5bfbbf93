import { Alert, Anchor, Text } from '@mantine/core';
import { IconCircleCheck } from '@tabler/icons-react';
import type { CurrentSession } from '../../../types/api';

export interface SignedInNoticeProps {
  current: CurrentSession;
  /** Already sanitised path the person was headed to. */
  returnTo: string;
}

/** Shown on the sign-in page to someone who already has a session: where to go instead. */
export function SignedInNotice({ current, returnTo }: SignedInNoticeProps) {
  const who = current.user.name || current.user.email;
  return (
    <Alert color="blue" title="You are already signed in" icon={<IconCircleCheck aria-hidden />}>
      <Text size="sm">
        You are signed in as {who}
        {current.user.name && current.user.email ? ` (${current.user.email})` : ''}.
      </Text>
      <Text size="sm" mt={4}>
        {/* A full page load: the destination may be a page the server renders, not this app. */}
        <Anchor href={returnTo} fw={600} inherit>
          {returnTo === '/account' ? 'Continue to your account' : 'Continue'}
        </Anchor>
      </Text>
    </Alert>
  );
}
