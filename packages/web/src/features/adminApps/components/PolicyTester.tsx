import { policySchema } from '@gatehouse/contract';
import { Button, Group, Paper, SegmentedControl, Stack, Text, Textarea, TextInput, VisuallyHidden } from '@mantine/core';
import { IconCircleCheck, IconCircleX } from '@tabler/icons-react';
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import classes from './PolicyTester.module.css';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import type { Policy } from '../api/getAdminApps';
import { useTestPolicy, type PolicyTestResult } from '../api/testPolicy';
import { parseClaims, parseList } from '../utils/policyForm';
import { describeDecision } from '../utils/policySummary';

/** What the page hands in to pick a real user (the users feature's search), so this feature needs none of its own. */
export interface UserPickerSlotProps {
  value: string | null;
  onChange: (userId: string | null) => void;
}

export interface PolicyTesterProps {
  appId: string;
  /** The policy as it stands in the form, saved or not: what is tested. */
  policy: Policy;
  renderUserPicker: (props: UserPickerSlotProps) => ReactNode;
}

type Mode = 'user' | 'claims';

function Verdict({ result }: { result: PolicyTestResult }) {
  const Icon = result.allow ? IconCircleCheck : IconCircleX;
  const tone = result.allow ? classes.allowed : classes.denied;
  return (
    <Paper withBorder p="md" radius="md" data-testid="policy-test-result" data-allow={String(result.allow)}>
      <Group gap="sm" align="flex-start" wrap="nowrap">
        <Icon size={28} className={tone} aria-hidden style={{ flexShrink: 0 }} />
        <Stack gap={2}>
          <Text fw={700} size="lg" className={tone}>
            {result.allow ? 'Allowed' : 'Denied'}
          </Text>
          <Text size="sm">
            <VisuallyHidden>Reason: </VisuallyHidden>
            {describeDecision(result)}
          </Text>
          <Text size="xs" c="dimmed">
            Tested as {result.subject.email}
            {result.subject.groups.length > 0 ? ` (groups: ${result.subject.groups.join(', ')})` : ' (no groups)'}
          </Text>
        </Stack>
      </Group>
    </Paper>
  );
}

/**
 * "Test this policy": would this user (or these claims) reach the app under the policy as the form has
 * it (before it is saved), and which rule decides.
 */
export function PolicyTester({ appId, policy, renderUserPicker }: PolicyTesterProps) {
  const [mode, setMode] = useState<Mode>('user');
  const [userId, setUserId] = useState<string | null>(null);
  const [email, setEmail] = useState('');
  const [groups, setGroups] = useState('');
  const [claims, setClaims] = useState('');
  const test = useTestPolicy();
  const modeLabelId = useId();

  // A draft the server would refuse is not sent: the form marks what to fix.
  const draftValid = policySchema.safeParse(policy).success;
  const ready = (mode === 'user' ? Boolean(userId) : email.trim().length > 0) && draftValid;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!ready) return;
    test.mutate(
      mode === 'user' && userId
        ? { appId, policy, userId }
        : { appId, policy, subject: { email: email.trim(), groups: parseList(groups), roles: [], claims: parseClaims(claims) } },
    );
  };
  const changeMode = (next: string) => {
    setMode(next === 'claims' ? 'claims' : 'user');
    test.reset();
  };

  return (
    <Section
      title="Test this policy"
      description="Check whether someone would get in under the rules above, as they are now (saved or not), and which rule decides."
    >
      <form onSubmit={submit} aria-label="Test this policy">
        <Stack gap="md">
          <Stack gap={4}>
            <Text size="sm" fw={500} id={modeLabelId}>
              Test with
            </Text>
            <SegmentedControl
              aria-labelledby={modeLabelId}
              value={mode}
              onChange={changeMode}
              data={[
                { value: 'user', label: 'A user' },
                { value: 'claims', label: 'Typed-in claims' },
              ]}
              style={{ alignSelf: 'flex-start' }}
            />
          </Stack>
          {mode === 'user' ? (
            renderUserPicker({
              value: userId,
              onChange: (next) => {
                setUserId(next);
                test.reset();
              },
            })
          ) : (
            <>
              <TextInput label="Email" type="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
              <TextInput
                label="Groups"
                description="Separated by commas"
                value={groups}
                onChange={(event) => setGroups(event.currentTarget.value)}
              />
              <Textarea
                label="Other claims"
                description="name=value, one per line"
                autosize
                minRows={1}
                value={claims}
                onChange={(event) => setClaims(event.currentTarget.value)}
              />
            </>
          )}
          <div>
            <Button type="submit" disabled={!ready} loading={test.isPending}>
              Test
            </Button>
            {!draftValid && (
              <Text size="sm" c="dimmed" mt="xs">
                The rules above are not complete yet: finish them (Save shows what is missing), then test.
              </Text>
            )}
          </div>
          <div aria-live="polite">
            {test.isSuccess && <Verdict result={test.data} />}
            {test.isError && <ProblemAlert title="We couldn't test the policy" error={test.error} />}
          </div>
        </Stack>
      </form>
    </Section>
  );
}
