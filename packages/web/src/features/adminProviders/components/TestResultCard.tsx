import type { ProviderTestResult } from '@gatehouse/contract';
import { Badge, Code, Group, Paper, Stack, Text } from '@mantine/core';
import { IconCircleCheck, IconCircleX } from '@tabler/icons-react';
import { DateTime } from '../../../components/DateTime';
import { Facts } from '../../../components/Facts';
import { signInRefusalLabel } from '../../../lib/signInRefusals';
import classes from './TestResultCard.module.css';

/** What went wrong, for admins, by the catalogue code people would get. */
const FAILURES: Record<string, string> = {
  provider_unavailable: 'Gatehouse could not reach the provider (its discovery, PAR or token endpoint).',
  provider_misconfigured: 'The provider refused Gatehouse’s registration there.',
  sign_in_denied: 'The provider did not sign the person in.',
  invalid_response: "The provider's answer could not be verified (token, ID token or userinfo).",
  sign_in_expired: 'The test took too long or was already used.',
};

/** The verdict in words: who would get in, as whom, or why not. */
function verdict(result: ProviderTestResult): { good: boolean; title: string; detail: string } {
  const who = result.profile?.email ?? 'This person';
  switch (result.result) {
    case 'create':
      return { good: true, title: 'Would sign in as a new user', detail: `${who} is unknown to Gatehouse; a user would be created on first sign-in.` };
    case 'existing':
      return { good: true, title: `Would sign in as ${result.user?.email ?? 'an existing user'}`, detail: 'This identity is already linked to that user.' };
    case 'link':
      return {
        good: true,
        title: `Would sign in as ${result.user?.email ?? 'an existing user'}`,
        detail: 'The verified email belongs to that user, and this provider may link by email: the identity would join their account.',
      };
    case 'refused':
      return { good: false, title: 'Would be refused', detail: result.why ? `Because ${result.why}.` : 'A sign-in rule says no.' };
    case 'failed':
      // The provider said Gatehouse's registration there is wrong: what to change, in the provider's own words.
      if (result.code === 'provider_misconfigured') return { good: false, title: 'The provider is not set up correctly', detail: result.fix ? `${result.fix}.` : FAILURES.provider_misconfigured! };
      // A provider's own check (a hosted domain, a tenant) refuses with a reason, like a rule.
      if (result.why) return { good: false, title: 'Refused by the provider’s checks', detail: `Because ${result.why}.` };
      return { good: false, title: 'The sign-in failed', detail: FAILURES[result.code ?? ''] ?? 'The sign-in did not complete.' };
  }
}

/** The outcome of a test sign-in: the verdict, what people would read, and the profile the provider sent. */
export function TestResultCard({ result }: { result: ProviderTestResult }) {
  const { good, title, detail } = verdict(result);
  const Icon = good ? IconCircleCheck : IconCircleX;
  const tone = good ? classes.good : classes.bad;
  const profile = result.profile;
  return (
    <Paper withBorder radius="md" p="lg" data-testid="provider-test-result" data-result={result.result}>
      <Stack gap="md">
        <Group gap="sm" align="flex-start" wrap="nowrap">
          <Icon size={32} className={tone} aria-hidden style={{ flexShrink: 0 }} />
          <Stack gap={4} miw={0}>
            {/* The icon carries the colour; the title keeps the body's, since green text on white is below 4.5:1. */}
            <Text fw={700} size="lg" component="h2" m={0}>
              {title}
            </Text>
            <Text size="sm">{detail}</Text>
            {result.code && (
              <Text size="sm">
                People would see: “{result.message}” <Code>{result.code}</Code>
              </Text>
            )}
            {result.reason && (
              <Text size="sm">
                Reason: {signInRefusalLabel(result.reason) ?? result.reason} <Code>{result.reason}</Code>
              </Text>
            )}
            <Text size="xs" c="dimmed">
              Tested <DateTime value={result.time} />
              {result.actor ? ` by ${result.actor.email}` : ''}. Nothing was created: no user, identity or session.
            </Text>
          </Stack>
        </Group>
        {profile && (
          <Stack gap="xs">
            <Text fw={600} size="sm" component="h3" m={0}>
              What {result.provider.name} sent
            </Text>
            <Facts
              facts={[
                { label: 'Subject (sub)', value: <Code>{profile.subject}</Code> },
                { label: 'Email', value: profile.email ?? 'none' },
                { label: 'Email verified', value: profile.emailVerified ? 'Yes' : 'No' },
                { label: 'Name', value: profile.name ?? 'none' },
              ]}
            />
            <Group gap={6}>
              <Text size="xs" c="dimmed">
                Groups
              </Text>
              {profile.groups.length === 0 ? (
                <Text size="xs">none</Text>
              ) : (
                profile.groups.map((group) => (
                  <Badge key={group} variant="default" tt="none" size="sm">
                    {group}
                  </Badge>
                ))
              )}
              {profile.groupCount > profile.groups.length && <Text size="xs">and {profile.groupCount - profile.groups.length} more</Text>}
            </Group>
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}
