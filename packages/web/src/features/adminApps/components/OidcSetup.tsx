import type { AdminApp, ClientSecret } from '@gatehouse/contract';
import { Alert, Anchor, Button, Code, CopyButton, Group, List, Modal, Skeleton, Stack, Tabs, Text, Title } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useState } from 'react';
import { CopyableValue } from '../../../components/CopyableValue';
import { DateTime } from '../../../components/DateTime';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { useClientSecrets, useCreateClientSecret, useRevokeClientSecret } from '../api/clientSecrets';
import { AUTHENTICATION_LABELS, usesSecret } from '../utils/oidcForm';
import { CLIENT_SECRET, discoveryUrl, oidcRecipes, PASSPHRASE } from '../utils/oidcRecipes';
import { FileBlock } from './ProxySetup';

type OidcApp = AdminApp & { oidc: NonNullable<AdminApp['oidc']> };

/** The secret just made: shown once, with a copy button and what to do with it. */
function NewSecretDialog({ secret, onClose }: { secret: string | undefined; onClose: () => void }) {
  return (
    <Modal opened={secret !== undefined} onClose={onClose} title="Copy the client secret now" centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="md">
        <Alert color="orange" variant="light" icon={<IconAlertTriangle aria-hidden />} title="Shown this once" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
          Gatehouse keeps only a hash of it: once this window is closed, nobody can see it again. Paste it into the app now, or create
          another one later.
        </Alert>
        <Code block tabIndex={0} role="region" aria-label="The new client secret" style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }} data-testid="new-client-secret">
          {secret}
        </Code>
        <Group justify="flex-end" gap="sm">
          <CopyButton value={secret ?? ''} timeout={2000}>
            {({ copied, copy }) => (
              <Button variant="default" onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
          <Button onClick={onClose} data-autofocus>
            Done
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** A console app's live secrets: each by its first characters, with who made it and when; create (two at most) and revoke. */
function ConsoleSecrets({ app }: { app: OidcApp }) {
  const secrets = useClientSecrets(app.id, true);
  const create = useCreateClientSecret(app.id);
  const revoke = useRevokeClientSecret(app.id);
  const [shown, setShown] = useState<string | undefined>(undefined);
  const live = secrets.data ?? [];
  const full = live.length >= 2;
  const row = (secret: ClientSecret) => (
    <Group key={secret.id} justify="space-between" gap="sm" wrap="wrap" data-testid="client-secret">
      <Stack gap={0} miw={0}>
        <Text size="sm" ff="monospace">
          {secret.hint}…
        </Text>
        <Text size="xs" c="dimmed">
          Created <DateTime value={secret.createdAt} />
          {secret.createdBy ? ` by ${secret.createdBy.email ?? secret.createdBy.id}` : ''}
        </Text>
      </Stack>
      <Button
        size="compact-sm"
        color="red"
        variant="light"
        loading={revoke.isPending && revoke.variables === secret.id}
        onClick={() => revoke.mutate(secret.id)}
        aria-label={`Revoke the secret starting ${secret.hint}`}
      >
        Revoke
      </Button>
    </Group>
  );
  return (
    <Stack gap="sm">
      <Title order={3} size="h4">
        Client secrets
      </Title>
      <Text size="sm" c="dimmed">
        At most two at a time: to change the app&apos;s secret, create a second one, give it to the app, then revoke the first.
      </Text>
      {secrets.isPending ? (
        <Skeleton height={48} aria-label="Loading the client secrets" />
      ) : secrets.isError ? (
        <ProblemAlert title="We couldn't load the client secrets" error={secrets.error} onRetry={() => void secrets.refetch()} />
      ) : live.length === 0 ? (
        <Text size="sm">No secret yet: the app cannot sign anyone in until it has one.</Text>
      ) : (
        <Stack gap="xs">{live.map(row)}</Stack>
      )}
      {create.isError && <ProblemAlert title="We couldn't create a secret" error={create.error} />}
      {revoke.isError && <ProblemAlert title="We couldn't revoke the secret" error={revoke.error} />}
      <Group>
        <Button
          variant="light"
          disabled={full || secrets.isPending}
          loading={create.isPending}
          onClick={() => create.mutate(undefined, { onSuccess: (made) => setShown(made.secret) })}
        >
          Create a secret
        </Button>
        {full && (
          <Text size="sm" c="dimmed">
            Two secrets already: revoke one first.
          </Text>
        )}
      </Group>
      <NewSecretDialog
        secret={shown}
        onClose={() => {
          setShown(undefined);
          create.reset();
        }}
      />
    </Stack>
  );
}

/**
 * An app that signs people in with OpenID Connect: what to paste into it (issuer, discovery, client id,
 * its authentication, the URIs Gatehouse accepts, the scopes), its secrets, and each known app's
 * configuration from docs/openid-provider/, filled in.
 */
export function OidcSetup({ app, issuer }: { app: OidcApp; issuer: string }) {
  const { oidc } = app;
  const origin = new URL(app.publicUrl).origin;
  const recipes = oidcRecipes({ issuer, clientId: oidc.clientId, appUrl: origin });
  const secret = usesSecret(oidc.authentication);
  return (
    <Section
      title="OpenID Connect"
      description="This app signs people in with Gatehouse as its OpenID Provider; its policy decides who may, at every sign-in and token refresh."
      data-testid="oidc-setup"
    >
      <Stack gap="lg">
        <Stack gap="md">
          <Title order={3} size="h4">
            What to paste into the app
          </Title>
          <CopyableValue label="Issuer" value={issuer} />
          <CopyableValue label="Discovery URL" description="Most apps need only this and the client id: it names every endpoint." value={discoveryUrl(issuer)} />
          <CopyableValue label="Client ID" value={oidc.clientId} />
          <Stack gap={2}>
            <Text size="sm" fw={500}>
              Client authentication
            </Text>
            <Text size="sm">{AUTHENTICATION_LABELS[oidc.authentication]}</Text>
          </Stack>
          {oidc.redirectUris.map((uri, index) => (
            <CopyableValue key={uri} label={oidc.redirectUris.length > 1 ? `Redirect URI ${index + 1}` : 'Redirect URI'} value={uri} />
          ))}
          {oidc.postLogoutRedirectUris.map((uri, index) => (
            <CopyableValue key={uri} label={oidc.postLogoutRedirectUris.length > 1 ? `Post-logout redirect URI ${index + 1}` : 'Post-logout redirect URI'} value={uri} />
          ))}
          {oidc.backchannelLogoutUri && <CopyableValue label="Back-channel logout URI" description="Gatehouse posts a logout token here when the person's Gatehouse session ends." value={oidc.backchannelLogoutUri} />}
          <CopyableValue label="Scopes" value={oidc.scopes.join(' ')} />
        </Stack>
        {secret &&
          (oidc.secretsFromConfig ? (
            <Text size="sm">
              Its client secrets are set in the configuration file (<code>oidc.secrets</code>, from the environment): change them there and
              reload the configuration.
            </Text>
          ) : (
            <ConsoleSecrets app={app} />
          ))}
        <Stack gap="sm">
          <Title order={3} size="h4">
            Ready-made configurations
          </Title>
          <Tabs defaultValue="Grafana" keepMounted={false}>
            <Tabs.List>
              {recipes.map((recipe) => (
                <Tabs.Tab key={recipe.app} value={recipe.app}>
                  {recipe.app}
                </Tabs.Tab>
              ))}
            </Tabs.List>
            {recipes.map((recipe) => {
              const missing = !oidc.redirectUris.includes(recipe.uris.redirectUri);
              return (
                <Tabs.Panel key={recipe.app} value={recipe.app} pt="md">
                  <Stack gap="md">
                    <Text size="sm">
                      {recipe.unfilled.includes(CLIENT_SECRET) && (
                        <>
                          Replace <code>{CLIENT_SECRET}</code> with the app&apos;s secret.{' '}
                        </>
                      )}
                      {recipe.unfilled.includes(PASSPHRASE) && (
                        <>
                          Replace <code>{PASSPHRASE}</code> with a long random value of your own.{' '}
                        </>
                      )}
                      Every line is explained in{' '}
                      <Anchor href={`/${recipe.guide}`} target="_blank" rel="noreferrer" underline="always">
                        {recipe.guide}
                      </Anchor>
                      .
                    </Text>
                    <List size="sm" spacing={4}>
                      <List.Item>
                        Its redirect URI: <code>{recipe.uris.redirectUri}</code>
                        {missing ? ' (not among this app’s redirect URIs yet: add it above)' : ''}
                      </List.Item>
                      {recipe.uris.postLogoutRedirectUri && (
                        <List.Item>
                          Its post-logout redirect URI: <code>{recipe.uris.postLogoutRedirectUri}</code>
                        </List.Item>
                      )}
                      {recipe.uris.backchannelLogoutUri && (
                        <List.Item>
                          Its back-channel logout URI: <code>{recipe.uris.backchannelLogoutUri}</code>
                        </List.Item>
                      )}
                    </List>
                    <FileBlock file={{ name: recipe.name, text: recipe.text }} />
                  </Stack>
                </Tabs.Panel>
              );
            })}
          </Tabs>
        </Stack>
      </Stack>
    </Section>
  );
}
