import { Alert, Stack, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useLoaderData, useParams, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { BackToProviders } from '../../features/adminProviders/components/BackToProviders';
import { ProviderGuide } from '../../features/adminProviders/components/ProviderGuide';
import { loadGuide } from '../../features/adminProviders/utils/providerGuides';
import { ensureSession } from '../ensureSession';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request, params }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    return { markdown: (await loadGuide(params.guide ?? '')) ?? null };
  };

/** The guide's title: its first line ("# Google (`kind: google`)" → "Google (kind: google)"). */
function titleOf(markdown: string): string {
  return (/^#\s+(.+)$/m.exec(markdown)?.[1] ?? 'Setup guide').replace(/`/g, '');
}

/** `/admin/providers/guides/:guide`: how to register Gatehouse at a kind of provider, from docs/providers/. */
export default function AdminProviderGuideRoute() {
  const { markdown } = useLoaderData<{ markdown: string | null }>();
  const { guide = '' } = useParams();
  return (
    <Stack gap="lg" maw={760}>
      <PageTitle title={markdown ? titleOf(markdown) : 'Setup guide not found'} />
      <BackToProviders />
      {markdown ? (
        <ProviderGuide markdown={markdown} />
      ) : (
        <>
          <Title order={1}>Setup guide not found</Title>
          <Alert color="gray" title="There is no such setup guide">
            The console has no guide named “{guide}”.
          </Alert>
        </>
      )}
    </Stack>
  );
}
