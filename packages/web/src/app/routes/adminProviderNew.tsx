import { pages } from '@gatehouse/contract';
import { Button, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { IconWorldSearch } from '@tabler/icons-react';
import type { QueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { ProblemAlert } from '../../components/ProblemAlert';
import { Section } from '../../components/Section';
import { useCreateProvider } from '../../features/adminProviders/api/createProvider';
import { useDiscoverIssuer } from '../../features/adminProviders/api/discoverIssuer';
import { BackToProviders } from '../../features/adminProviders/components/BackToProviders';
import { DiscoveryPreviewCard } from '../../features/adminProviders/components/DiscoveryPreviewCard';
import { ProviderForm } from '../../features/adminProviders/components/ProviderForm';
import { DEFAULT_SCOPES, emptyProviderForm, suggestedScopes } from '../../features/adminProviders/utils/providerForm';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    return null;
  };

/**
 * `/admin/providers/new`: first the issuer URL, whose discovery document is fetched and shown; then the
 * rest of the definition. The server fetches discovery again when saving.
 */
export default function AdminProviderNewRoute() {
  const discover = useDiscoverIssuer();
  const create = useCreateProvider();
  const navigate = useNavigate();
  const [values, setValues] = useState(emptyProviderForm);
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
    <Stack gap="lg">
      <PageTitle title="New provider" />
      <BackToProviders />
      <Stack gap={4}>
        <Title order={1}>New provider</Title>
        <Text c="dimmed" size="sm">
          Any OpenID Connect provider, by its issuer URL: Gatehouse reads the rest from its discovery document.
        </Text>
      </Stack>
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
            create.mutate({ ...provider, issuer: previewedIssuer ?? provider.issuer }, { onSuccess: (created) => void navigate(pages.adminProvider.href(created.id)) })
          }
          actions={
            <Button component={Link} to={pages.adminProviders.href()} variant="default">
              Cancel
            </Button>
          }
        />
      )}
    </Stack>
  );
}
