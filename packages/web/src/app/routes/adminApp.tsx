import { pages, type AdminApp } from '@gatehouse/contract';
import { Alert, Button, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { adminAppsQueryOptions, useAdminApps } from '../../features/adminApps/api/getAdminApps';
import { useUpdateApp } from '../../features/adminApps/api/updateApp';
import { adminProvidersQueryOptions, useAdminProviders } from '../../features/adminProviders/api/getAdminProviders';
import { AppForm } from '../../features/adminApps/components/AppForm';
import { OidcSetup } from '../../features/adminApps/components/OidcSetup';
import { ProxySetup } from '../../features/adminApps/components/ProxySetup';
import { ReloadConfigCard } from '../../features/adminProviders/components/ReloadConfigCard';
import { BackToApps } from '../../features/adminApps/components/BackToApps';
import { DeleteAppDialog } from '../../features/adminApps/components/DeleteAppDialog';
import { PolicyTester } from '../../features/adminApps/components/PolicyTester';
import { AppGrantsSection } from '../../features/adminApps/components/AppGrantsSection';
import { SourceBadge } from '../../components/SourceBadge';
import { appToForm, formToPolicy } from '../../features/adminApps/utils/policyForm';
import { confirmSaved } from '../../lib/confirm';
import { UserSelect } from '../../features/users/components/UserSelect';
import { isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { useConfigBadge } from '../../features/config/api/getConfigState';
import { ConfigSummary } from '../../features/config/components/ConfigSummary';
import { describeRule } from '../../features/adminApps/utils/policySummary';
import { ensureSession } from '../ensureSession';

/** An app from the configuration, as the summary lists it: in the form's words. */
function appFacts(app: AdminApp) {
  const options = [
    app.websockets && 'WebSockets',
    app.corsPreflight && 'CORS preflight',
    app.preserveHost && 'Preserve Host',
    app.passAccessToken.length > 0 && `Pass access tokens from ${app.passAccessToken.join(', ')}`,
    app.compress && 'Compress answers',
  ].filter(Boolean);
  const rules = (kind: 'Allow' | 'Deny', list: AdminApp['policy']['allow']) =>
    list.length > 0 ? list.map((rule, index) => <div key={index}>{`${kind} rule ${index + 1}: ${describeRule(rule)}`}</div>) : 'None';
  return [
    { label: 'Id', value: app.id },
    { label: 'Name', value: app.name },
    { label: 'Public URL', value: app.publicUrl },
    ...(app.guard
      ? [
          { label: 'Served by', value: app.upstream === undefined ? 'nginx, Caddy or Traefik (no upstream)' : `Gatehouse, forwarding to ${app.upstream}` },
          { label: 'Public paths', value: app.publicPaths.length > 0 ? app.publicPaths.join(', ') : 'None' },
          { label: 'Proxy options', value: options.length > 0 ? options.join(', ') : 'None' },
        ]
      : [{ label: 'Host', value: 'Not guarded by Gatehouse (OpenID Connect only)' }]),
    ...(app.oidc ? [{ label: 'OpenID Connect', value: `Client ${app.oidc.clientId}, ${app.oidc.authentication}, scopes ${app.oidc.scopes.join(' ')}` }] : []),
    { label: 'Allow rules', value: rules('Allow', app.policy.allow) },
    { label: 'Deny rules', value: rules('Deny', app.policy.deny) },
  ];
}

/** The app's entry as the configuration file has it (no `source`, nor the oidc block's `secretsFromConfig`: those are the console's). */
function appEntry({ source: _source, oidc, ...definition }: AdminApp): Record<string, unknown> {
  if (!oidc) return definition;
  const { secretsFromConfig: _secretsFromConfig, ...client } = oidc;
  return { ...definition, oidc: client };
}

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminAppsQueryOptions());
    void queryClient.prefetchQuery(adminProvidersQueryOptions());
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
  // The providers an app may take access tokens from (none listed yet while they load).
  const providers = useAdminProviders().data ?? [];
  const configBadge = useConfigBadge();
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
          <SourceBadge source={app.source} configLabel={configBadge} />
        </Group>
        <Text c="dimmed" size="sm">
          {app.id} · {app.publicUrl}
        </Text>
      </Stack>
      {readOnly ? (
        <ConfigSummary
          list="apps"
          facts={appFacts(app)}
          entry={appEntry(app)}
          howToChange={
            <>
              Read-only here: edit its entry under <code>apps:</code> in the configuration file, then reload the configuration (no
              restart: sessions and open connections stay). You can still test its policy below.
            </>
          }
        />
      ) : (
        <AppForm
          initialValues={initialValues}
          providers={providers}
          isNew={false}
          saving={update.isPending}
          error={update.error ?? undefined}
          onSubmit={(definition) => update.mutate(definition, { onSuccess: saved })}
          onValuesChange={setDraft}
          actions={
            <>
              <Button component={Link} to={pages.adminApps.href()} variant="default">
                Cancel
              </Button>
              <Button color="red" variant="light" onClick={() => setDeleting(true)} ml="auto">
                Delete app
              </Button>
            </>
          }
        />
      )}
      {readOnly && <ReloadConfigCard />}
      {app.oidc && <OidcSetup app={{ ...app, oidc: app.oidc }} issuer={window.location.origin} />}
      {app.guard && <ProxySetup app={app} />}
      {/* Who is signed in to it with Gatehouse: only an OpenID Connect client has grants. */}
      {app.oidc && <AppGrantsSection app={app} />}
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
