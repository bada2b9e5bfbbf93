import type { MyIdentity } from '@gatehouse/contract';
import { Alert, Badge, Button, Card, Group, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconId, IconInfoCircle, IconUnlink } from '@tabler/icons-react';
import { useId, useRef, useState, type ReactNode } from 'react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { Item, ItemList } from '../../../components/ItemList';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { isUnauthenticated } from '../../../lib/apiClient';
import { signInAfterUnlinkHref } from '../utils/unlinkedCurrent';
import { useIdentities, type IdentitiesResponse } from '../api/getIdentities';
import { LinkProviderButton } from './LinkProviderButton';
import { UnlinkIdentityDialog } from './UnlinkIdentityDialog';

function IdentitiesList({ identities, onUnlink }: { identities: MyIdentity[]; onUnlink: (identity: MyIdentity) => void }) {
  // The last identity is the only way into the account: the server refuses to unlink it (409
  // `last_identity`), so the button is not offered at all.
  const canUnlink = identities.length > 1;
  return (
    <ItemList>
      {identities.map((identity) => (
        <Item
          key={identity.id}
          data-provider={identity.provider.id}
          actions={
            canUnlink && (
              <Button
                size="xs"
                variant="default"
                leftSection={<IconUnlink size={16} aria-hidden />}
                aria-label={`Unlink ${identity.provider.name}`}
                onClick={() => onUnlink(identity)}
              >
                Unlink
              </Button>
            )
          }
        >
          <ThemeIcon variant="light" color="gray" size="lg" radius="md" aria-hidden>
            <IconId size={20} />
          </ThemeIcon>
          <Stack gap={4} miw={0}>
            <Group gap={8}>
              <Text fw={600} size="sm">
                {identity.provider.name}
              </Text>
              {identity.primary && (
                <Badge variant="light" size="sm">
                  Primary
                </Badge>
              )}
              {identity.current && (
                <Badge variant="dot" color="green" size="sm">
                  Used for this session
                </Badge>
              )}
            </Group>
            <Facts
              facts={[
                { label: 'Email', value: identity.email ?? 'Not shared' },
                { label: 'Linked', value: <DateTime value={identity.linkedAt} /> },
                { label: 'Last used', value: identity.lastUsedAt ? <DateTime value={identity.lastUsedAt} relative /> : 'Never' },
              ]}
            />
          </Stack>
        </Item>
      ))}
    </ItemList>
  );
}

function LinkMore({ data }: { data: IdentitiesResponse }) {
  const headingId = useId();
  return (
    <Stack gap="xs" component="section" aria-labelledby={headingId}>
      <Title order={3} size="h5" id={headingId}>
        Link another provider
      </Title>
      {data.linkable.length > 0 ? (
        <>
          <Text size="sm" c="dimmed">
            You will sign in there once; after that, either provider signs you in to this same account.
          </Text>
          <Group gap="sm">
            {data.linkable.map((provider) => (
              <LinkProviderButton key={provider.id} provider={provider} />
            ))}
          </Group>
        </>
      ) : (
        <Text size="sm" c="dimmed">
          Every available provider is linked to your account.
        </Text>
      )}
    </Stack>
  );
}

/**
 * The account page's "Linked identities": the providers that sign in to this account, which one this
 * session used and which created the account; unlink one (never the last), link another.
 */
export function IdentitiesSection() {
  const headingId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const identities = useIdentities();
  const [target, setTarget] = useState<MyIdentity | null>(null);
  const [dialogOpened, dialog] = useDisclosure(false);
  const [status, setStatus] = useState('');
  const [unlinked, setUnlinked] = useState(false);

  let content: ReactNode;
  if (identities.isPending || isUnauthenticated(identities.error)) {
    content = (
      <Stack gap="sm" role="status" aria-label="Loading linked identities">
        <Skeleton height={44} />
        <Skeleton height={36} width={180} />
      </Stack>
    );
  } else if (identities.isError) {
    content = (
      <ProblemAlert title="We couldn't load your linked identities" error={identities.error} onRetry={() => void identities.refetch()} />
    );
  } else {
    const list = identities.data.identities;
    content = (
      <>
        {list.length === 0 ? (
          <Text size="sm" c="dimmed">
            No identities are linked to your account.
          </Text>
        ) : (
          <IdentitiesList
            identities={list}
            onUnlink={(identity) => {
              setStatus('');
              setUnlinked(false);
              setTarget(identity);
              dialog.open();
            }}
          />
        )}
        {list.length === 1 && (
          <Alert color="gray" variant="light" icon={<IconInfoCircle aria-hidden />} data-testid="last-identity-hint">
            {`${list[0]!.provider.name} is the only way to sign in to your account, so it can't be unlinked. Link another provider first if you want to replace it.`}
          </Alert>
        )}
        <LinkMore data={identities.data} />
      </>
    );
  }

  return (
    <Card component="section" aria-labelledby={headingId} withBorder radius="md" padding="lg">
      <Stack gap="md">
        <Stack gap={4}>
          <Title order={2} size="h3" id={headingId} ref={headingRef} tabIndex={-1} style={{ outline: 'none' }}>
            Linked identities
          </Title>
          <Text size="sm" c="dimmed">
            Each of these providers signs you in to this account.
          </Text>
        </Stack>
        {content}
      </Stack>
      {/* Always in the page, so screen readers announce the text when it changes. */}
      <div role="status">
        {status && (
          <Text size="sm" fw={500} mt="md">
            {status}
          </Text>
        )}
      </div>
      <UnlinkIdentityDialog
        opened={dialogOpened}
        identity={target}
        onClose={dialog.close}
        returnFocus={!unlinked}
        onUnlinked={(identity) => {
          if (identity.current) {
            // The server ended this session with the identity: say so on the sign-in page, which offers
            // the other providers. A full page load, so nothing cached about the session that ended
            // (its user, its account) can still read "signed in as …" there.
            window.location.assign(signInAfterUnlinkHref(identity.provider.id));
            return;
          }
          // The row that opened the dialog is about to go: focus the section instead of that button.
          setUnlinked(true);
          headingRef.current?.focus();
          dialog.close();
          setStatus(`${identity.provider.name} is no longer linked to your account.`);
        }}
      />
    </Card>
  );
}
