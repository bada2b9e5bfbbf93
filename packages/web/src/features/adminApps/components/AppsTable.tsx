import { Anchor, Button, EmptyState, Table, Text } from '@mantine/core';
import { IconAppWindow } from '@tabler/icons-react';
import { Link } from 'react-router';
import { paths } from '../../../config/paths';
import type { AdminApp } from '../api/getAdminApps';
import { summarizePolicy } from '../utils/policySummary';
import { SourceBadge } from '../../../components/SourceBadge';

/** Every protected app: its page, where people reach it, where it forwards to, where it is defined and who may open it. */
export function AppsTable({ apps }: { apps: AdminApp[] }) {
  if (apps.length === 0) {
    return (
      <EmptyState
        icon={<IconAppWindow size={32} aria-hidden />}
        withIndicatorBackground
        title="No apps yet"
        description="Add an app to put Gatehouse in front of it."
        py="xl"
      >
        <EmptyState.Actions>
          <Button component={Link} to={paths.adminAppNew.getHref()} variant="default">
            New app
          </Button>
        </EmptyState.Actions>
      </EmptyState>
    );
  }
  return (
    <Table.ScrollContainer minWidth={860}>
      <Table highlightOnHover verticalSpacing="sm" data-testid="apps-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Name</Table.Th>
            <Table.Th scope="col">Public URL</Table.Th>
            <Table.Th scope="col">Upstream</Table.Th>
            <Table.Th scope="col">Source</Table.Th>
            <Table.Th scope="col">Policy</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {apps.map((app) => (
            <Table.Tr key={app.id} data-app-id={app.id}>
              <Table.Td>
                <Anchor component={Link} to={paths.adminApp.getHref(app.id)} fw={600} size="sm">
                  {app.name}
                </Anchor>
                <Text size="xs" c="dimmed">
                  {app.id}
                </Text>
              </Table.Td>
              <Table.Td>
                <Anchor href={app.publicUrl} size="sm" target="_blank" rel="noreferrer" style={{ overflowWrap: 'anywhere' }}>
                  {app.publicUrl}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Text size="sm" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
                  {app.upstream}
                </Text>
              </Table.Td>
              <Table.Td>
                <SourceBadge source={app.source} />
              </Table.Td>
              <Table.Td>
                <Text size="sm">{summarizePolicy(app.policy)}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
