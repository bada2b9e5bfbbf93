import { useMemo } from 'react';
import { pages, type AdminApp } from '@gatehouse/contract';
import { Anchor, Button, Text } from '@mantine/core';
import { IconAppWindow } from '@tabler/icons-react';
import { Link } from 'react-router';
import { BreakableUrl } from '../../../components/BreakableUrl';
import { DataTable, RowLink, type DataTableColumn } from '../../../components/DataTable';
import { EmptyList } from '../../../components/EmptyList';
import { SourceBadge } from '../../../components/SourceBadge';
import { summarizePolicy } from '../utils/policySummary';

/** The table's columns; `configLabel` names where the read-only ones come from ("From gatehouse.yaml"). */
const columnsFor = (configLabel: string): DataTableColumn<AdminApp>[] => [
  {
    key: 'name',
    header: 'Name',
    cell: (app) => (
      <RowLink to={pages.adminApp.href(app.id)} detail={app.id}>
        {app.name}
      </RowLink>
    ),
  },
  {
    key: 'publicUrl',
    header: 'Public URL',
    cell: (app) => (
      <Anchor href={app.publicUrl} size="sm" target="_blank" rel="noreferrer">
        <BreakableUrl value={app.publicUrl} />
      </Anchor>
    ),
  },
  {
    key: 'upstream',
    header: 'Protected by',
    cell: (app) => (
      <>
        {!app.guard ? null : app.upstream === undefined ? (
          <Text size="sm" c="dimmed">
            Its own proxy (forward-auth)
          </Text>
        ) : (
          <Text size="sm" ff="monospace">
            <BreakableUrl value={app.upstream} />
          </Text>
        )}
        {app.oidc && (
          <Text size="sm" c="dimmed">
            OpenID Connect ({app.oidc.clientId})
          </Text>
        )}
      </>
    ),
  },
  { key: 'source', header: 'Source', cell: (app) => <SourceBadge source={app.source} configLabel={configLabel} /> },
  { key: 'policy', header: 'Policy', cell: (app) => <Text size="sm">{summarizePolicy(app.policy)}</Text> },
];

/** Every protected app: its page, where people reach it, where it forwards to, where it is defined and who may open it. */
export function AppsTable({ apps, configLabel }: { apps: AdminApp[]; configLabel: string }) {
  const columns = useMemo(() => columnsFor(configLabel), [configLabel]);
  return (
    <DataTable
      columns={columns}
      rows={apps}
      getRowKey={(app) => app.id}
      getRowAttributes={(app) => ({ 'data-app-id': app.id })}
      minWidth={860}
      label="Apps"
      testId="apps-table"
      empty={
        <EmptyList
          icon={<IconAppWindow size={32} aria-hidden />}
          title="No apps yet"
          description="Add an app to put Gatehouse in front of it."
          action={
            <Button component={Link} to={pages.adminAppNew.href()} variant="default">
              New app
            </Button>
          }
        />
      }
    />
  );
}
