import type { SignInProvider } from '@gatehouse/contract';
import { IconAlertTriangle, IconInfoCircle } from '@tabler/icons-react';
import { Alert } from './SignInAlert';
import { describeSignInError, type SignInFailure } from '../utils/signInErrors';

export interface SignInErrorAlertProps {
  failure: SignInFailure;
  /** Known providers, to name the one in `?provider=`; an unknown id is never shown. */
  providers?: SignInProvider[] | undefined;
}

/** The banner a failed sign-in attempt ends on: the catalogue's sentence and the reference id. */
export function SignInErrorAlert({ failure, providers }: SignInErrorAlertProps) {
  const provider = failure.providerId ? providers?.find((p) => p.id === failure.providerId)?.name : undefined;
  const { title, message, code, notice } = describeSignInError(failure.code, { provider });
  return (
    <Alert tone={notice ? 'blue' : 'red'} title={title} icon={notice ? <IconInfoCircle aria-hidden /> : <IconAlertTriangle aria-hidden />} data-error-code={code} role="alert">
      <p>{message}</p>
      {failure.reference && <p>Reference: {failure.reference}</p>}
    </Alert>
  );
}
