import type { DiscoveryPreview } from '@gatehouse/contract';
import { Code, Group, Paper, Stack, Text } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck, IconCircleX } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import classes from './DiscoveryPreviewCard.module.css';
import { BreakableUrl } from '../../../components/BreakableUrl';

type Tone = 'yes' | 'no' | 'maybe';

const ICONS = { yes: IconCircleCheck, no: IconCircleX, maybe: IconAlertTriangle } as const;

/** A capability in words, with an icon of its tone (the words carry the meaning; the colour repeats it). */
function Capability({ tone, children }: { tone: Tone; children: ReactNode }) {
  const Icon = ICONS[tone];
  return (
    <Group gap={6} wrap="nowrap" component="span">
      <Icon size={16} className={classes[tone]} aria-hidden style={{ flexShrink: 0 }} />
      <span>{children}</span>
    </Group>
  );
}

function Row({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt className={classes.term}>{term}</dt>
      <dd className={classes.value}>{children}</dd>
    </>
  );
}

const endpoint = (url: string | null) => (url ? <Code style={{ whiteSpace: 'normal' }}><BreakableUrl value={url} /></Code> : <Text span size="sm" c="dimmed">None</Text>);

/**
 * What the issuer's discovery document says, before anything is saved: whether it can do what
 * Gatehouse needs (PKCE with S256) and uses when offered (PAR, back-channel logout), and its endpoints.
 */
export function DiscoveryPreviewCard({ preview }: { preview: DiscoveryPreview }) {
  const pkce: Record<DiscoveryPreview['pkce'], [Tone, string]> = {
    S256: ['yes', 'Yes (S256)'],
    'not-advertised': ['maybe', 'Not advertised: Gatehouse still sends it; check the provider supports it'],
    unsupported: ['no', `No: it lists ${preview.codeChallengeMethodsSupported.join(', ')} only, and Gatehouse requires S256`],
  };
  const par: Record<DiscoveryPreview['pushedAuthorizationRequests'], [Tone, string]> = {
    required: ['yes', 'Required by the provider (used)'],
    supported: ['yes', 'Supported (used)'],
    no: ['maybe', 'Not offered'],
  };
  return (
    <Paper withBorder radius="md" p="md" data-testid="discovery-preview">
      <Stack gap="sm">
        <Group gap="sm" wrap="nowrap" align="flex-start">
          {preview.pkce === 'unsupported' ? (
            <IconCircleX size={24} className={classes.no} aria-hidden style={{ flexShrink: 0 }} />
          ) : (
            <IconCircleCheck size={24} className={classes.yes} aria-hidden style={{ flexShrink: 0 }} />
          )}
          <Stack gap={0} miw={0}>
            <Text fw={700}>{preview.pkce === 'unsupported' ? 'This provider cannot be used' : 'OpenID Connect provider found'}</Text>
            <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {preview.issuer}
            </Text>
          </Stack>
        </Group>
        <dl className={classes.list} aria-label="What the provider offers">
          <Row term="PKCE">
            <Capability tone={pkce[preview.pkce][0]}>{pkce[preview.pkce][1]}</Capability>
          </Row>
          <Row term="Pushed authorization requests">
            <Capability tone={par[preview.pushedAuthorizationRequests][0]}>{par[preview.pushedAuthorizationRequests][1]}</Capability>
          </Row>
          <Row term="Back-channel logout">
            <Capability tone={preview.backchannelLogout ? 'yes' : 'maybe'}>{preview.backchannelLogout ? 'Supported' : 'Not offered'}</Capability>
          </Row>
          <Row term="ID token signing">{preview.idTokenSigningAlgValuesSupported.join(', ') || 'Not listed'}</Row>
          <Row term="Scopes">{preview.scopesSupported.join(' ') || 'Not listed'}</Row>
          <Row term="Authorization endpoint">{endpoint(preview.authorizationEndpoint)}</Row>
          <Row term="Token endpoint">{endpoint(preview.tokenEndpoint)}</Row>
          <Row term="Userinfo endpoint">{endpoint(preview.userinfoEndpoint)}</Row>
          <Row term="End-session endpoint">{endpoint(preview.endSessionEndpoint)}</Row>
          <Row term="JWKS">{endpoint(preview.jwksUri)}</Row>
        </dl>
      </Stack>
    </Paper>
  );
}
