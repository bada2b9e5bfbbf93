import { pages, type ProviderDefinition, type ProviderPreset } from '@gatehouse/contract';
import { Button, Group, Skeleton, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconWorldSearch } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { Section } from '../../components/Section';
import { useCreateProvider } from '../../features/adminProviders/api/createProvider';
import { useDiscoverIssuer } from '../../features/adminProviders/api/discoverIssuer';
import { providerPresetsQueryOptions, useProviderPresets } from '../../features/adminProviders/api/getProviderPresets';
import { BackToProviders } from '../../features/adminProviders/components/BackToProviders';
import { DiscoveryPreviewCard } from '../../features/adminProviders/components/DiscoveryPreviewCard';
import { PresetPicker } from '../../features/adminProviders/components/PresetPicker';
import { ProviderForm } from '../../features/adminProviders/components/ProviderForm';
import { DEFAULT_SCOPES, emptyProviderForm, GENERIC_KIND, suggestedScopes } from '../../features/adminProviders/utils/providerForm';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(providerPresetsQueryOptions());
    return null;
  };

/**
 * `/admin/providers/new`: first the kind of provider (`?kind=`, so the choice survives a reload). A
 * preset then shows its own fields beside the common ones; the generic OpenID Connect kind first asks
 * for the issuer URL, whose discovery document is fetched and shown. The server checks again on saving.
 */
export default function AdminProviderNewRoute() {
  const presets = useProviderPresets();
  const [search, setSearch] = useSearchParams();
  const kind = search.get('kind') ?? undefined;
  const preset = presets.data?.find((candidate) => candidate.kind === kind);

  const choose = (next: string) => setSearch({ kind: next }, { replace: true });

  return (
    <Stack gap="lg">
      <PageTitle title="New provider" />
      <BackToProviders />
      <Stack gap={4}>
        <Title order={1}>New provider</Title>
        <Text c="dimmed" size="sm">
          Choose the kind of provider, register Gatehouse there with the redirect URI shown, then fill in what it gave you.
        </Text>
      </Stack>
      {presets.isPending ? (
        <Skeleton height={120} radius="md" role="status" aria-label="Loading the kinds of provider" />
      ) : presets.isError ? (
        <ProblemAlert title="We couldn't load the kinds of provider" error={presets.error} onRetry={() => void presets.refetch()} />
      ) : (
        <Section title="Kind" description="What the provider is. A kind's own settings and setup guide follow.">
          <PresetPicker presets={presets.data} value={preset?.kind} onChange={choose} />
        </Section>
      )}
      {/* A new kind starts a new form: nothing typed for one kind is carried into another's. */}
      {preset && (preset.kind === GENERIC_KIND ? <GenericProvider key={preset.kind} preset={preset} /> : <PresetProvider key={preset.kind} preset={preset} />)}
    </Stack>
  );
}

/** A preset: its fields and the common ones at once (its issuer is its own). */
function PresetProvider({ preset }: { preset: ProviderPreset }) {
  const create = useCreateProvider();
  const navigate = useNavigate();
  const [values, setValues] = useState(() => emptyProviderForm(preset));
  return (
    <ProviderForm
      values={values}
      onChange={setValues}
      preset={preset}
      origin={window.location.origin}
      saving={create.isPending}
      error={create.error ?? undefined}
      onSubmit={(provider) => create.mutate(provider, { onSuccess: (created) => void navigate(pages.adminProvider.href(created.id)) })}
      actions={
        <Button component={Link} to={pages.adminProviders.href()} variant="default">
          Cancel
        </Button>
      }
    />
  );
}

/** Any OpenID Connect provider: its issuer URL and discovery preview first, then the rest. */
function GenericProvider({ preset }: { preset: ProviderPreset }) {
  const discover = useDiscoverIssuer();
  const create = useCreateProvider();
  const navigate = useNavigate();
  const [values, setValues] = useState(() => emptyProviderForm(preset));
  const [issuer, setIssuer] = useState('');
  const preview = discover.data;
  const previewedIssuer = discover.variables;
  const stale = preview !== undefined && previewedIssuer !== issuer.trim();

  const fetchDiscovery = (event: FormEvent) => {
    event.preventDefault();
    const wanted = issuer.trim();
    if (!wanted) return;
    discover.mutate(wanted, {
      onSuccess: (found) => {
        // Suggested scopes replace the defaults only while nobody has changed them.
        setValues((current) => ({
          ...current,
          issuer: wanted,
          scopes: current.scopes === DEFAULT_SCOPES.join(' ') || current.scopes === '' ? suggestedScopes(found) : current.scopes,
        }));
      },
    });
  };

  return (
    <>
      <Section title="Issuer" description="The provider's issuer URL, such as https://accounts.google.com or https://sso.example.com/realms/corp.">
        <form onSubmit={fetchDiscovery} aria-label="Issuer" noValidate>
          <Stack gap="md">
            <Group align="flex-end" gap="sm" wrap="wrap">
              <TextInput
                label="Issuer URL"
                required
                type="url"
                placeholder="https://"
                value={issuer}
                onChange={(event) => setIssuer(event.currentTarget.value)}
                style={{ flex: '1 1 320px' }}
                spellCheck={false}
              />
              <Button type="submit" variant={preview && !stale ? 'default' : 'filled'} loading={discover.isPending} leftSection={<IconWorldSearch size={16} aria-hidden />}>
                Fetch discovery
              </Button>
            </Group>
            <div aria-live="polite">
              {discover.isError && <ProblemAlert title="No usable discovery document" error={discover.error} />}
              {preview && !discover.isPending && <DiscoveryPreviewCard preview={preview} />}
            </div>
          </Stack>
        </form>
      </Section>
      {preview && (
        <ProviderForm
          values={values}
          onChange={setValues}
          preset={preset}
          origin={window.location.origin}
          backchannelLogout={preview.backchannelLogout}
          saving={create.isPending}
          error={create.error ?? undefined}
          blocked={
            stale
              ? 'The issuer URL changed since its discovery document was fetched: fetch it again first.'
              : preview.pkce === 'unsupported'
                ? 'This provider does not support PKCE with S256, which Gatehouse requires.'
                : undefined
          }
          onSubmit={(provider) =>
            create.mutate({ ...provider, issuer: previewedIssuer ?? provider.issuer } as ProviderDefinition, { onSuccess: (created) => void navigate(pages.adminProvider.href(created.id)) })
          }
          actions={
            <Button component={Link} to={pages.adminProviders.href()} variant="default">
              Cancel
            </Button>
          }
        />
      )}
    </>
  );
}
