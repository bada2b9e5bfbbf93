import type { CurrentSession, ReturnTo } from '@gatehouse/contract';
import { DEFAULT_RETURN_TO } from '@gatehouse/contract/paths';
import { IconCircleCheck } from '@tabler/icons-react';
import { Alert } from './SignInAlert';

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
    <Alert tone="blue" title="You are already signed in" icon={<IconCircleCheck aria-hidden />}>
      <p>
        You are signed in as {who}
        {current.user.name && current.user.email ? ` (${current.user.email})` : ''}.
      </p>
      <p>
        {/* A full page load: the destination may be a page the server renders, or an app at its own host. */}
        {/* The text colour and an underline: the link blue on the alert's light blue is below 4.5:1. */}
        <a href={href} className="alert-link">
          {href === DEFAULT_RETURN_TO ? 'Continue to your account' : host ? `Continue to ${host}` : 'Continue'}
        </a>
      </p>
    </Alert>
  );
}
