import type { AdminGrant } from '@gatehouse/contract';
import { Button, Stack, Text } from '@mantine/core';
import { useRef, useState } from 'react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { Item, ItemList } from '../../../components/ItemList';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { TableSkeleton } from '../../../components/TableSkeleton';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { deviceLabel } from '../../../lib/deviceLabel';
import { scopeWordsAbout } from '../../../lib/scopeWords';
import { useUserGrants } from '../api/getUserGrants';
import { useRevokeUserGrant } from '../api/revokeUserGrant';

/** The apps a user is signed in to with Gatehouse (their live grants), each in one of their sessions; each can be ended. */
export function UserAppsSection({ userId }: { userId: string }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const grants = useUserGrants(userId);
  const revoke = useRevokeUserGrant();
  const [status, setStatus] = useState('');

  const signOut = (grant: AdminGrant) => {
    setStatus('');
    revoke.mutate(grant.grantId, {
      onSuccess: () => {
        setStatus(`Signed out of ${grant.app.name}.`);
        headingRef.current?.focus();
      },
    });
  };

  let content;
  if (grants.isPending || isUnauthenticated(grants.error)) {
    content = <TableSkeleton rows={2} label="Loading the apps signed in with Gatehouse" />;
  } else if (grants.isError) {
    content = (
      <ProblemAlert title="We couldn't load the apps" error={grants.error} onRetry={isForbidden(grants.error) ? undefined : () => void grants.refetch()} />
    );
  } else if (grants.data.grants.length === 0) {
    content = (
      <Text size="sm" c="dimmed">
        Not signed in to any app with Gatehouse.
      </Text>
    );
  } else {
    content = (
      <ItemList label="Apps signed in with Gatehouse">
        {grants.data.grants.map((grant) => (
          <Item
            key={grant.grantId}
            actions={
              <Button
                size="xs"
                variant="default"
                loading={revoke.isPending && revoke.variables === grant.grantId}
                disabled={revoke.isPending && revoke.variables !== grant.grantId}
                onClick={() => signOut(grant)}
              >
                Sign out of {grant.app.name}
              </Button>
            }
          >
            <Stack gap={4} miw={0}>
              <Text fw={600} size="sm">
                {grant.app.name}
              </Text>
              <Facts
                facts={[
                  { label: 'Session', value: deviceLabel(grant.session.device) },
                  { label: 'Since', value: <DateTime value={grant.createdAt} /> },
                  { label: 'Last used', value: <DateTime value={grant.lastUsedAt} relative /> },
                  { label: 'It can see', value: scopeWordsAbout(grant.scopes) },
                ]}
              />
            </Stack>
          </Item>
        ))}
      </ItemList>
    );
  }

  return (
    <Section title="Apps signed in with Gatehouse" description="The apps this user signed in to with Gatehouse, in their sessions above." headingRef={headingRef}>
      {revoke.isError && <ProblemAlert title="We couldn't sign them out of that app" error={revoke.error} />}
      {content}
      {/* Always in the page, so screen readers announce the text when it changes. */}
      <Text size="sm" fw={500} role="status">
        {status}
      </Text>
    </Section>
  );
}
