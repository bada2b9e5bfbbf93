import { pages } from '@gatehouse/contract';
import { Button, Stack, Text, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, type LoaderFunctionArgs } from 'react-router';
import { PageTitle } from '../../components/PageTitle';
import { useCreateApp } from '../../features/adminApps/api/createApp';
import { AppForm } from '../../features/adminApps/components/AppForm';
import { BackToApps } from '../../features/adminApps/components/BackToApps';
import { emptyAppForm } from '../../features/adminApps/utils/policyForm';
import { adminProvidersQueryOptions, useAdminProviders } from '../../features/adminProviders/api/getAdminProviders';
import { ensureSession } from '../ensureSession';
import { confirmSaved } from '../../lib/confirm';

export const clientLoader =
  (queryClient: QueryClient) =>
  async ({ request }: LoaderFunctionArgs) => {
    await ensureSession(queryClient, request);
    void queryClient.prefetchQuery(adminProvidersQueryOptions());
    return null;
  };

/** `/admin/apps/new`: define an app and its policy; saved, it is live at once. */
export default function AdminAppNewRoute() {
  const create = useCreateApp();
  const navigate = useNavigate();
  const [initialValues] = useState(emptyAppForm);
  // The providers an app may take access tokens from (none listed yet while they load).
  const providers = useAdminProviders().data ?? [];
  return (
    <Stack gap="lg">
      <PageTitle title="New app" />
      <BackToApps />
      <Stack gap={4}>
        <Title order={1}>New app</Title>
        <Text c="dimmed" size="sm">
          The app is protected as soon as it is created: its host guarded, its OpenID Connect sign-in open, or both.
        </Text>
      </Stack>
      <AppForm
        initialValues={initialValues}
        providers={providers}
        isNew
        saving={create.isPending}
        error={create.error ?? undefined}
        onSubmit={(app) =>
          create.mutate(app, {
            onSuccess: (created) => {
              confirmSaved('App created', `${created.name} is live at ${created.publicUrl}.`);
              // Its own page: the policy tester, the proxy's configuration for an app nginx or Caddy serves,
              // and what to paste into an app that signs people in with OpenID Connect (its secret is made there).
              void navigate(pages.adminApp.href(created.id));
            },
          })
        }
        actions={
          <Button component={Link} to={pages.adminApps.href()} variant="default">
            Cancel
          </Button>
        }
      />
    </Stack>
  );
}
