import { Anchor, Button, EmptyState, Group, Stack, Table, Text } from '@mantine/core';
import { IconKey } from '@tabler/icons-react';
import { Link } from 'react-router';
import { SourceBadge } from '../../../components/SourceBadge';
import { paths } from '../../../config/paths';
import type { AdminProvider } from '../api/getAdminProviders';
import { ProviderEnabledSwitch } from './ProviderEnabledSwitch';
import { ProviderStatusBadge } from './ProviderStatusBadge';

/** Every identity provider: its page, its issuer, whether people can use it now, where it is defined, how many identities use it. */
export function ProvidersTable({ providers }: { providers: AdminProvider[] }) {
  if (providers.length === 0) {
    return (
      <EmptyState
        icon={<IconKey size={32} aria-hidden />}
        withIndicatorBackground
        title="No identity providers yet"
        description="Add your organisation's OpenID Connect provider so people can sign in."
        py="xl"
      >
        <EmptyState.Actions>
          <Button component={Link} to={paths.adminProviderNew.getHref()} variant="default">
            New provider
          </Button>
        </EmptyState.Actions>
      </EmptyState>
    );
  }
  return (
    <Table.ScrollContainer minWidth={860}>
      <Table highlightOnHover verticalSpacing="sm" data-testid="providers-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Name</Table.Th>
            <Table.Th scope="col">Issuer</Table.Th>
            <Table.Th scope="col">Status</Table.Th>
            <Table.Th scope="col">Source</Table.Th>
            <Table.Th scope="col" ta="right">
              Linked identities
            </Table.Th>
            <Table.Th scope="col">On sign-in page</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {providers.map((provider) => (
            <Table.Tr key={provider.id} data-provider-id={provider.id}>
              <Table.Td>
                <Anchor component={Link} to={paths.adminProvider.getHref(provider.id)} fw={600} size="sm">
                  {provider.name}
                </Anchor>
                <Text size="xs" c="dimmed">
                  {provider.id}
                </Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
                  {provider.issuer}
                </Text>
              </Table.Td>
              <Table.Td>
                <Stack gap={2} align="flex-start">
                  <ProviderStatusBadge provider={provider} />
                  {provider.enabled && provider.discovery.status === 'unavailable' && provider.discovery.error && (
                    <Text size="xs" c="dimmed" lineClamp={2} maw={260} title={provider.discovery.error}>
                      {provider.discovery.error}
                    </Text>
                  )}
                </Stack>
              </Table.Td>
              <Table.Td>
                <SourceBadge source={provider.source} />
              </Table.Td>
              <Table.Td ta="right">
                <Text size="sm">{provider.linkedIdentities}</Text>
              </Table.Td>
              <Table.Td>
                <Group gap="xs" wrap="nowrap">
                  <ProviderEnabledSwitch provider={provider} />
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
