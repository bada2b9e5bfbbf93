import type { ConsentRequest } from '@gatehouse/contract';
import { Button, Card, Group, List, Stack, Text, Title } from '@mantine/core';
import { BreakableUrl } from '../../../components/BreakableUrl';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { scopeWords } from '../../../lib/scopeWords';

export interface ConsentCardProps {
  consent: ConsentRequest;
  /** The answer being sent, if any. */
  pending: 'allow' | 'deny' | undefined;
  /** The failed answer, if the last one failed. */
  error: unknown;
  onAnswer(allow: boolean): void;
}

/**
 * What a third-party app asks, in the person's words: which app, where it lives (the origin it will
 * be answered at, so a look-alike name does not hide it), what it will see, and who is signed in.
 */
export function ConsentCard({ consent, pending, error, onAnswer }: ConsentCardProps) {
  const { app, origin, scopes, person } = consent;
  return (
    <Card withBorder radius="md" padding="xl" maw={520} mx="auto" mt="md">
      <Stack gap="md">
        <Title order={1} size="h2">
          Sign in to {app.name}?
        </Title>
        <Text>
          <strong>{app.name}</strong> at <code>
            <BreakableUrl value={origin} />
          </code> asks to sign you in with Gatehouse.
        </Text>
        <Stack gap={4}>
          <Text fw={600}>If you allow it, it will see</Text>
          <List>
            <List.Item>{scopeWords(scopes)}</List.Item>
          </List>
        </Stack>
        <Text size="sm">
          You are signed in as {person.name ? `${person.name} (${person.email})` : person.email}. {app.name} is not run by your organisation: allow it only if you trust it.
        </Text>
        {error !== undefined && <ProblemAlert title="Your answer was not taken" error={error} />}
        <Group gap="sm">
          <Button onClick={() => onAnswer(true)} loading={pending === 'allow'} disabled={pending !== undefined}>
            Allow
          </Button>
          <Button variant="default" onClick={() => onAnswer(false)} loading={pending === 'deny'} disabled={pending !== undefined}>
            Deny
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
