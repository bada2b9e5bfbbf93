import { useMemo } from 'react';
import { pages, type AdminProvider } from '@gatehouse/contract';
import { Box, Button, Group, Stack, Text } from '@mantine/core';
import { IconKey } from '@tabler/icons-react';
import { Link } from 'react-router';
import { BreakableUrl } from '../../../components/BreakableUrl';
import { DataTable, RowLink, type DataTableColumn } from '../../../components/DataTable';
import { EmptyList } from '../../../components/EmptyList';
import { SourceBadge } from '../../../components/SourceBadge';
import { ProviderEnabledSwitch } from './ProviderEnabledSwitch';
import { ProviderLogo } from './ProviderLogo';
import { ProviderStatusBadge } from './ProviderStatusBadge';
import { PublicationBadge } from './PublicationBadge';

/** The table's columns; `configLabel` names where the read-only ones come from ("From gatehouse.yaml"). */
const columnsFor = (configLabel: string): DataTableColumn<AdminProvider>[] => [
  {
    key: 'name',
    header: 'Name',
    cell: (provider) => (
      <Group gap="sm" wrap="nowrap" align="flex-start">
        <Box c="dimmed" mt={2} style={{ flex: 'none' }}>
          <ProviderLogo kind={provider.kind} size={18} />
        </Box>
        <Box miw={0}>
          <RowLink to={pages.adminProvider.href(provider.id)} detail={provider.id}>
            {provider.name}
          </RowLink>
        </Box>
      </Group>
    ),
  },
  {
    key: 'issuer',
    header: 'Issuer',
    cell: (provider) => (
      <Text size="sm" ff="monospace">
        <BreakableUrl value={provider.issuer} />
      </Text>
    ),
  },
  {
    key: 'status',
    header: 'Status',
    cell: (provider) => (
      <Stack gap={2} align="flex-start">
        <ProviderStatusBadge provider={provider} />
        <PublicationBadge provider={provider} />
        {provider.enabled && provider.discovery.status === 'unavailable' && provider.discovery.error && (
          <Text size="xs" c="dimmed" lineClamp={2} maw={260} title={provider.discovery.error}>
            {provider.discovery.error}
          </Text>
        )}
      </Stack>
    ),
  },
  { key: 'source', header: 'Source', noWrap: true, cell: (provider) => <SourceBadge source={provider.source} configLabel={configLabel} /> },
  { key: 'linkedIdentities', header: 'Linked identities', align: 'right', cell: (provider) => <Text size="sm">{provider.linkedIdentities}</Text> },
  {
    key: 'enabled',
    header: 'On sign-in page',
    cell: (provider) => <ProviderEnabledSwitch provider={provider} />,
  },
];

/** Every identity provider: its page, its issuer, whether people can use it now, where it is defined, how many identities use it. */
export function ProvidersTable({ providers, configLabel }: { providers: AdminProvider[]; configLabel: string }) {
  const columns = useMemo(() => columnsFor(configLabel), [configLabel]);
  return (
    <DataTable
      columns={columns}
      rows={providers}
      getRowKey={(provider) => provider.id}
      getRowAttributes={(provider) => ({ 'data-provider-id': provider.id })}
      minWidth={860}
      label="Providers"
      testId="providers-table"
      empty={
        <EmptyList
          icon={<IconKey size={32} aria-hidden />}
          title="No identity providers yet"
          description="Add your organisation's OpenID Connect provider so people can sign in."
          action={
            <Button component={Link} to={pages.adminProviderNew.href()} variant="default">
              New provider
            </Button>
          }
        />
      }
    />
  );
}
