import { definitionOfView, pages, type AdminProvider, type ProviderPreset } from '@gatehouse/contract';
import { Alert, Button, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { IconAlertTriangle, IconEyeOff } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { SourceBadge } from '../../components/SourceBadge';
import { adminProvidersQueryOptions, useAdminProviders } from '../../features/adminProviders/api/getAdminProviders';
import { providerPresetsQueryOptions, useProviderPresets } from '../../features/adminProviders/api/getProviderPresets';
import { useUpdateProvider } from '../../features/adminProviders/api/updateProvider';
import { BackToProviders } from '../../features/adminProviders/components/BackToProviders';
import { DeleteProviderDialog } from '../../features/adminProviders/components/DeleteProviderDialog';
import { ProviderEnabledSwitch } from '../../features/adminProviders/components/ProviderEnabledSwitch';
import { ProviderForm } from '../../features/adminProviders/components/ProviderForm';
import { ProviderStatusBadge } from '../../features/adminProviders/components/ProviderStatusBadge';
import { PublicationBadge } from '../../features/adminProviders/components/PublicationBadge';
import { PublishProviderDialog } from '../../features/adminProviders/components/PublishProviderDialog';
import { RegisterAtProvider } from '../../features/adminProviders/components/RegisterAtProvider';
import { TestSignInButton } from '../../features/adminProviders/components/TestSignInButton';
import { providerToForm } from '../../features/adminProviders/utils/providerForm';
import { isForbidden, isUnauthenticated } from '../../lib/apiClient';
import { useConfigBadge } from '../../features/config/api/getConfigState';
import { ConfigSummary } from '../../features/config/components/ConfigSummary';
import { ensureSession } from '../ensureSession';
import { BreakableUrl } from '../../components/BreakableUrl';

const yesNo = (value: boolean) => (value ? 'Yes' : 'No');

/** A provider from the configuration, as the summary lists it: in the form's words, never a credential. */
function providerFacts(provider: AdminProvider) {
  const options = Object.entries(provider.options).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  return [
    { label: 'Id', value: provider.id },
    { label: 'Name', value: provider.name },
    { label: 'Kind', value: provider.kind },
    ...(options.length > 0 ? [{ label: 'Options', value: options.join('; ') }] : []),
    { label: 'Issuer', value: provider.issuer },
    { label: 'Client id', value: provider.clientId },
    { label: 'Client authentication', value: provider.clientAuthMethod },
    { label: 'Credential', value: provider.hasClientSecret || provider.hasPrivateKey ? 'Set in the configuration (not shown)' : 'None' },
    { label: 'Scopes', value: provider.scopes.join(' ') },
    { label: 'Allowed email domains', value: provider.allowedDomains.length > 0 ? provider.allowedDomains.join(', ') : 'Any' },
    { label: 'Create users', value: yesNo(provider.createUsers) },
    { label: 'Trust its email', value: yesNo(provider.trustEmail) },
    { label: 'Trust its groups', value: provider.trustGroups ? 'Yes' : provider.groupPrefix ? `Only prefixed ${provider.groupPrefix}` : 'No' },
    { label: 'Trust its other claims', value: (provider.trustClaims ?? provider.trustGroups) ? 'Yes' : provider.groupPrefix ? `Only prefixed ${provider.groupPrefix}` : 'No' },
    { label: 'Pushed authorization requests', value: provider.pushedAuthorizationRequests },
    { label: 'Redirect URI', value: provider.redirectUri },
  ];
}

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminProvidersQueryOptions());
    void queryClient.prefetchQuery(providerPresetsQueryOptions());
    return null;
  };

function ProviderPage({ provider, preset }: { provider: AdminProvider; preset: ProviderPreset | undefined }) {
  const update = useUpdateProvider();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState(false);
  const [publishing, setPublishing] = useState(false);
  // Its kind stays as it is; the kind's own fields start from what is stored.
  const [values, setValues] = useState(() => providerToForm(provider, preset));
  const readOnly = provider.source === 'config';
  const configBadge = useConfigBadge();
  const inUse = provider.linkedIdentities > 0;
  const toList = () => void navigate(pages.adminProviders.href());

  return (
    <Stack gap="lg">
      <PageTitle title={provider.name} />
      <BackToProviders />
      <Group justify="space-between" align="flex-end" gap="md">
        <Stack gap={4} miw={0}>
          <Group gap="sm" align="center">
            <Title order={1}>{provider.name}</Title>
            <SourceBadge source={provider.source} configLabel={configBadge} />
            <ProviderStatusBadge provider={provider} />
            <PublicationBadge provider={provider} />
          </Group>
          <Text c="dimmed" size="sm">
            {provider.id} · <BreakableUrl value={provider.issuer} /> · {provider.linkedIdentities === 1 ? '1 linked identity' : `${provider.linkedIdentities} linked identities`}
          </Text>
        </Stack>
        <Group gap="md" align="center">
          <ProviderEnabledSwitch provider={provider} withLabel />
          <TestSignInButton providerId={provider.id} />
        </Group>
      </Group>
      {provider.enabled && provider.discovery.status === 'unavailable' && (
        <Alert color="yellow" variant="light" icon={<IconAlertTriangle aria-hidden />} title="The provider can't be reached" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
          Gatehouse keeps trying in the background; sign-ins with it fail until it answers.
          {provider.discovery.error && (
            <Text size="sm" ff="monospace" mt={4} style={{ overflowWrap: 'anywhere' }}>
              {provider.discovery.error}
            </Text>
          )}
        </Alert>
      )}
      {provider.warnings.length > 0 && (
        <Alert
          color="yellow"
          variant="light"
          icon={<IconAlertTriangle aria-hidden />}
          title="Check how far this provider is trusted"
          styles={{ title: { color: 'var(--mantine-color-text)' } }}
          data-testid="provider-warnings"
        >
          <Stack gap={4}>
            {provider.warnings.map((warning) => (
              <Text key={warning} size="sm">
                {warning}
              </Text>
            ))}
          </Stack>
        </Alert>
      )}
      {provider.publication.state === 'hidden' && (
        <Alert
          color="orange"
          variant="light"
          icon={<IconEyeOff aria-hidden />}
          title="Hidden — not tested yet"
          styles={{ title: { color: 'var(--mantine-color-text)' } }}
          data-testid="provider-hidden"
        >
          <Stack gap="sm" align="flex-start">
            <Text size="sm">
              Nobody sees {provider.name} on the sign-in or account page until a test sign-in with it passes; the first one that does
              publishes it.
            </Text>
            <Group gap="sm">
              <TestSignInButton providerId={provider.id} label="Test sign-in to publish" />
              <Button variant="default" onClick={() => setPublishing(true)}>
                Publish without testing…
              </Button>
            </Group>
          </Stack>
        </Alert>
      )}
      {readOnly ? (
        <ConfigSummary
          list="providers"
          facts={providerFacts(provider)}
          entry={definitionOfView(provider)}
          howToChange={
            <>
              Read-only here: edit its entry under <code>providers:</code> in the configuration file, then reload it (Providers page) or restart
              Gatehouse. Its credential is not shown. You can still test its sign-in.
            </>
          }
        />
      ) : null}
      {readOnly ? (
        <RegisterAtProvider origin={window.location.origin} providerId={provider.id} />
      ) : (
      <ProviderForm
        values={values}
        onChange={setValues}
        stored={{ hasClientSecret: provider.hasClientSecret, hasPrivateKey: provider.hasPrivateKey }}
        preset={preset}
        origin={window.location.origin}
        readOnly={readOnly}
        saving={update.isPending}
        error={update.error ?? undefined}
        onSubmit={(definition) => update.mutate(definition, { onSuccess: toList })}
        actions={
          readOnly ? undefined : (
            <>
              <Button component={Link} to={pages.adminProviders.href()} variant="default">
                Cancel
              </Button>
              <Group gap="xs" ml="auto" wrap="nowrap">
                {inUse && (
                  <Text size="sm" c="dimmed" id="delete-provider-why">
                    People have signed in with it: turn it off instead.
                  </Text>
                )}
                <Button color="red" variant="light" onClick={() => setDeleting(true)} disabled={inUse} aria-describedby={inUse ? 'delete-provider-why' : undefined}>
                  Delete provider
                </Button>
              </Group>
            </>
          )
        }
      />
      )}
      {!readOnly && <PublishProviderDialog opened={publishing} provider={provider} onClose={() => setPublishing(false)} />}
      {!readOnly && <DeleteProviderDialog opened={deleting} provider={provider} onClose={() => setDeleting(false)} onDeleted={toList} />}
    </Stack>
  );
}

/** `/admin/providers/:providerId`: a provider's definition (read-only for providers from gatehouse.yaml), on/off, test sign-in, delete. */
export default function AdminProviderRoute() {
  const { providerId = '' } = useParams();
  const providers = useAdminProviders();
  // The kind's fields must be known before its form opens: saving without them would drop its options.
  const presets = useProviderPresets();

  if (providers.isPending || presets.isPending || isUnauthenticated(providers.error)) {
    return (
      <Stack gap="lg">
        <PageTitle title="Provider" />
        <BackToProviders />
        <Stack gap="lg" role="status" aria-label="Loading the provider">
          <Skeleton height={36} width="50%" />
          <Skeleton height={240} radius="md" />
        </Stack>
      </Stack>
    );
  }
  const provider = providers.data?.find((candidate) => candidate.id === providerId);
  if (presets.isError && !isUnauthenticated(presets.error)) {
    return (
      <Stack gap="lg">
        <PageTitle title="Provider" />
        <BackToProviders />
        <Title order={1}>Provider</Title>
        <ProblemAlert title="We couldn't load the kinds of provider" error={presets.error} onRetry={isForbidden(presets.error) ? undefined : () => void presets.refetch()} />
      </Stack>
    );
  }
  if (providers.isError || !provider) {
    return (
      <Stack gap="lg">
        <PageTitle title={provider ? 'Provider' : 'Provider not found'} />
        <BackToProviders />
        <Title order={1}>{providers.isError ? 'Provider' : 'Provider not found'}</Title>
        {providers.isError ? (
          <ProblemAlert
            title="We couldn't load this provider"
            error={providers.error}
            onRetry={isForbidden(providers.error) ? undefined : () => void providers.refetch()}
          />
        ) : (
          <Alert color="gray" title="There is no provider with this id">
            It may have been deleted.
          </Alert>
        )}
      </Stack>
    );
  }
  // Keyed by id, so moving between providers starts a fresh form.
  return <ProviderPage key={provider.id} provider={provider} preset={presets.data?.find((candidate) => candidate.kind === provider.kind)} />;
}
