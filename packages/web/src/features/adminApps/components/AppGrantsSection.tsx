import { pages, type AdminGrant } from '@gatehouse/contract';
import { Anchor, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { IconPlugConnectedX } from '@tabler/icons-react';
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { DataTable, type DataTableColumn } from '../../../components/DataTable';
import { DateTime } from '../../../components/DateTime';
import { EmptyList } from '../../../components/EmptyList';
import { Pager } from '../../../components/Pager';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { TableSkeleton } from '../../../components/TableSkeleton';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { deviceLabel } from '../../../lib/deviceLabel';
import { scopeWordsAbout } from '../../../lib/scopeWords';
import { useAppGrants } from '../api/getAppGrants';
import { useRevokeAppGrants } from '../api/revokeAppGrants';
import { useRevokeGrant } from '../api/revokeGrant';

export const APP_GRANTS_PAGE_SIZE = 25;

export interface AppGrantsSectionProps {
  app: { id: string; name: string };
}

function SignEveryoneOutDialog({ opened, app, count, onClose, onDone }: { opened: boolean; app: AppGrantsSectionProps['app']; count: number; onClose(): void; onDone(revoked: number): void }) {
  const revokeAll = useRevokeAppGrants();
  const close = () => {
    if (revokeAll.isPending) return;
    revokeAll.reset();
    onClose();
  };
  return (
    <Modal opened={opened} onClose={close} title={`Sign everyone out of ${app.name}?`} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="lg">
        <Text size="sm">
          {count === 1 ? 'The one sign-in' : `All ${count} sign-ins`} to {app.name} with Gatehouse end: the app&apos;s tokens stop
          working at once, and an app that takes back-channel logout is told. People keep their Gatehouse sessions and sign in to{' '}
          {app.name} again.
        </Text>
        {revokeAll.isError && <ProblemAlert title={`We couldn't sign everyone out of ${app.name}`} error={revokeAll.error} />}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={close} data-autofocus disabled={revokeAll.isPending}>
            Cancel
          </Button>
          <Button color="red" loading={revokeAll.isPending} onClick={() => revokeAll.mutate(app.id, { onSuccess: ({ revoked }) => onDone(revoked) })}>
            Sign everyone out
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/**
 * An app's page: who is signed in to it with Gatehouse (its live grants): the person, the browser of
 * the Gatehouse session it belongs to, since when, last used, what the app may know of them; each can be
 * ended, or all of them at once.
 */
export function AppGrantsSection({ app }: AppGrantsSectionProps) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [page, setPage] = useState(1);
  const grants = useAppGrants(app.id, { page, pageSize: APP_GRANTS_PAGE_SIZE });
  const revoke = useRevokeGrant();
  const [confirming, setConfirming] = useState(false);
  // What the last action did, in words: the row it removed is gone.
  const [status, setStatus] = useState('');

  const columns: DataTableColumn<AdminGrant>[] = [
    {
      key: 'person',
      header: 'Person',
      cell: (grant) => (
        <Anchor component={Link} to={pages.adminUser.href(grant.user.id)} size="sm">
          {grant.user.email || grant.user.id}
        </Anchor>
      ),
    },
    { key: 'device', header: 'Session', cell: (grant) => deviceLabel(grant.session.device) },
    { key: 'since', header: 'Since', cell: (grant) => <DateTime value={grant.createdAt} />, noWrap: true },
    { key: 'used', header: 'Last used', cell: (grant) => <DateTime value={grant.lastUsedAt} relative />, noWrap: true },
    { key: 'scopes', header: 'It can see', cell: (grant) => scopeWordsAbout(grant.scopes) },
    {
      key: 'actions',
      header: 'Actions',
      noWrap: true,
      cell: (grant) => (
        <Button
          size="compact-xs"
          variant="default"
          aria-label={`Sign ${grant.user.email || grant.user.id} out of ${app.name}`}
          // A table squeezes its last column first: the button keeps its words on one line.
          styles={{ label: { whiteSpace: 'nowrap' } }}
          loading={revoke.isPending && revoke.variables === grant.grantId}
          disabled={revoke.isPending && revoke.variables !== grant.grantId}
          onClick={() => {
            setStatus('');
            revoke.mutate(grant.grantId, {
              onSuccess: () => {
                setStatus(`Signed ${grant.user.email || 'them'} out of ${app.name}.`);
                headingRef.current?.focus();
              },
            });
          }}
        >
          Sign out
        </Button>
      ),
    },
  ];

  let content;
  if (grants.isPending || isUnauthenticated(grants.error)) {
    content = <TableSkeleton rows={3} label="Loading who is signed in" />;
  } else if (grants.isError) {
    content = (
      <ProblemAlert title="We couldn't load who is signed in" error={grants.error} onRetry={isForbidden(grants.error) ? undefined : () => void grants.refetch()} />
    );
  } else {
    const { total, pageSize } = grants.data;
    content = (
      <Stack gap="md" aria-busy={grants.isPlaceholderData} style={{ opacity: grants.isPlaceholderData ? 0.6 : 1 }}>
        <DataTable
          columns={columns}
          rows={grants.data.grants}
          getRowKey={(grant) => grant.grantId}
          getRowAttributes={(grant) => ({ 'data-grant-id': grant.grantId })}
          minWidth={820}
          label={`People signed in to ${app.name} with Gatehouse`}
          empty={
            <EmptyList
              icon={<IconPlugConnectedX size={22} aria-hidden />}
              title="Nobody is signed in with Gatehouse"
              description={`When people sign in to ${app.name} with Gatehouse, they are listed here.`}
            />
          }
        />
        {total > 0 && <Pager page={grants.data.page} pageSize={pageSize} total={total} onChange={setPage} noun="sign-ins" one="sign-in" />}
      </Stack>
    );
  }
  const total = grants.data?.total ?? 0;

  return (
    <Section
      title="Signed in with Gatehouse"
      description={`The people signed in to ${app.name} with Gatehouse, each in one of their Gatehouse sessions. Signing someone out ends the app's tokens; their Gatehouse session stays.`}
      headingRef={headingRef}
      actions={
        <Button color="red" variant="light" disabled={total === 0} onClick={() => setConfirming(true)}>
          Sign everyone out of this app
        </Button>
      }
      data-testid="app-grants"
    >
      {revoke.isError && <ProblemAlert title={`We couldn't sign that person out of ${app.name}`} error={revoke.error} />}
      {content}
      {/* Always in the page, so screen readers announce the text when it changes. */}
      <Text size="sm" fw={500} role="status">
        {status}
      </Text>
      <SignEveryoneOutDialog
        opened={confirming}
        app={app}
        count={total}
        onClose={() => setConfirming(false)}
        onDone={(revoked) => {
          setConfirming(false);
          setPage(1);
          setStatus(revoked === 1 ? `Ended 1 sign-in to ${app.name}.` : `Ended ${revoked} sign-ins to ${app.name}.`);
          headingRef.current?.focus();
        }}
      />
    </Section>
  );
}
