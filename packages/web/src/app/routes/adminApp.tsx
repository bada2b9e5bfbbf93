import { pages, type AdminApp } from '@gatehouse/contract';
import { Alert, Button, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { IconFileCode } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { adminAppsQueryOptions, useAdminApps } from '../../features/adminApps/api/getAdminApps';
import { useUpdateApp } from '../../features/adminApps/api/updateApp';
import { AppForm } from '../../features/adminApps/components/AppForm';
import { BackToApps } from '../../features/adminApps/components/BackToApps';
import { DeleteAppDialog } from '../../features/adminApps/components/DeleteAppDialog';
import { PolicyTester } from '../../features/adminApps/components/PolicyTester';
import { SourceBadge } from '../../components/SourceBadge';
import { appToForm, formToPolicy } from '../../features/adminApps/utils/policyForm';
import { confirmSaved } from '../../lib/confirm';
import { UserSelect } from '../../features/users/components/UserSelect';
import { isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminAppsQueryOptions());
    return null;
  };

function AppPage({ app }: { app: AdminApp }) {
  const update = useUpdateApp();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState(false);
  const [initialValues] = useState(() => appToForm(app));
  // The form's values as they are now: the policy tester tests them before they are saved.
  const [draft, setDraft] = useState(initialValues);
  const readOnly = app.source === 'config';
  const toList = () => void navigate(pages.adminApps.href());
  const saved = (definition: { name: string }) => {
    confirmSaved('Saved', `${definition.name} is saved; it counts from the next request.`);
    toList();
  };

  return (
    <Stack gap="lg">
      <PageTitle title={app.name} />
      <BackToApps />
      <Stack gap={4}>
        <Group gap="sm" align="center">
          <Title order={1}>{app.name}</Title>
          <SourceBadge source={app.source} />
        </Group>
        <Text c="dimmed" size="sm">
          {app.id} · {app.publicUrl}
        </Text>
      </Stack>
      {readOnly && (
        <Alert color="gray" variant="light" icon={<IconFileCode aria-hidden />} title="Defined in gatehouse.yaml">
          This app comes from the configuration file, so it can&apos;t be changed or deleted here. Edit its entry under{' '}
          <code>apps:</code> in gatehouse.yaml and restart Gatehouse. You can still test its policy below.
        </Alert>
      )}
      <AppForm
        initialValues={initialValues}
        isNew={false}
        readOnly={readOnly}
        saving={update.isPending}
        error={update.error ?? undefined}
        onSubmit={(definition) => update.mutate(definition, { onSuccess: saved })}
        onValuesChange={setDraft}
        actions={
          readOnly ? undefined : (
            <>
              <Button component={Link} to={pages.adminApps.href()} variant="default">
                Cancel
              </Button>
              <Button color="red" variant="light" onClick={() => setDeleting(true)} ml="auto">
                Delete app
              </Button>
            </>
          )
        }
      />
      <PolicyTester
        appId={app.id}
        policy={formToPolicy(draft)}
        renderUserPicker={(props) => <UserSelect value={props.value} onChange={(userId) => props.onChange(userId)} />} />
      {!readOnly && <DeleteAppDialog opened={deleting} app={app} onClose={() => setDeleting(false)} onDeleted={toList} />}
    </Stack>
  );
}

/** `/admin/apps/:appId`: an app's definition and policy (read-only for apps from gatehouse.yaml), and the policy tester. */
export default function AdminAppRoute() {
  const { appId = '' } = useParams();
  const apps = useAdminApps();

  if (apps.isPending || isUnauthenticated(apps.error)) {
    return (
      <Stack gap="lg">
        <PageTitle title="App" />
        <BackToApps />
        <Stack gap="lg" role="status" aria-label="Loading the app">
          <Skeleton height={36} width="50%" />
          <Skeleton height={240} radius="md" />
        </Stack>
      </Stack>
    );
  }
  const app = apps.data?.find((candidate) => candidate.id === appId);
  if (apps.isError || !app) {
    return (
      <Stack gap="lg">
        <PageTitle title={app ? 'App' : 'App not found'} />
        <BackToApps />
        <Title order={1}>{apps.isError ? 'App' : 'App not found'}</Title>
        {apps.isError ? (
          <ProblemAlert
            title="We couldn't load this app"
            error={apps.error}
            onRetry={isForbidden(apps.error) ? undefined : () => void apps.refetch()}
          />
        ) : (
          <Alert color="gray" title="There is no app with this id">
            It may have been deleted.
          </Alert>
        )}
      </Stack>
    );
  }
  // Keyed by id, so moving between apps starts a fresh form.
  return <AppPage key={app.id} app={app} />;
}
