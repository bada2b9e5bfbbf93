import type { UserIdentity } from '@gatehouse/contract';
import { Stack, Text, ThemeIcon } from '@mantine/core';
import { IconId } from '@tabler/icons-react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { Item, ItemList } from '../../../components/ItemList';
import { Section } from '../../../components/Section';

/** The providers that sign this user in. */
export function UserIdentitiesSection({ identities }: { identities: UserIdentity[] }) {
  return (
    <Section title="Linked identities" description="Each of these provider accounts signs in to this user.">
      {identities.length === 0 ? (
        <Text size="sm" c="dimmed">
          No identities are linked to this user.
        </Text>
      ) : (
        <ItemList>
          {identities.map((identity) => (
            <Item key={identity.id} data-provider={identity.provider.id}>
              <ThemeIcon variant="light" color="gray" size="lg" radius="md" aria-hidden>
                <IconId size={20} />
              </ThemeIcon>
              <Stack gap={4} miw={0}>
                <Text fw={600} size="sm">
                  {identity.provider.name}
                </Text>
                <Facts
                  facts={[
                    { label: 'Email', value: identity.email ?? 'Not shared' },
                    { label: 'Subject', value: identity.subject },
                    { label: 'Linked', value: <DateTime value={identity.linkedAt} /> },
                    { label: 'Last used', value: identity.lastUsedAt ? <DateTime value={identity.lastUsedAt} relative /> : 'Never' },
                  ]}
                />
              </Stack>
            </Item>
          ))}
        </ItemList>
      )}
    </Section>
  );
}
