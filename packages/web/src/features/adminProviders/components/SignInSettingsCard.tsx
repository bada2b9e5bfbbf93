import type { SignInSettings } from '@gatehouse/contract';
import { Alert, Button, Group, Skeleton, Stack, Switch, Text, TextInput } from '@mantine/core';
import { IconCircleCheck } from '@tabler/icons-react';
import { useState, type FormEvent } from 'react';
import { formFields } from '../../../components/formFields';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { Section } from '../../../components/Section';
import { isForbidden, isUnauthenticated } from '../../../lib/apiClient';
import { useSignInSettings } from '../api/getSignInSettings';
import { useUpdateSignInSettings } from '../api/updateSignInSettings';
import { splitList } from '../utils/providerForm';

const TITLE = 'Who may sign in';
const DESCRIPTION = 'For every provider at once, on top of each provider’s own rules: both must admit a person, so these can only narrow.';

function SettingsForm({ saved }: { saved: SignInSettings }) {
  const update = useUpdateSignInSettings();
  const [values, setValues] = useState({ domains: saved.allowedDomains.join(', '), createUsers: saved.createUsers });
  // A change hides the last save's outcome, which was about the values before it.
  const { text, toggle } = formFields(values, (next) => {
    setValues(next);
    update.reset();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ allowedDomains: splitList(values.domains.toLowerCase()), createUsers: values.createUsers });
  };
  return (
    <form onSubmit={submit} aria-label={TITLE}>
      <Stack gap="md">
        <TextInput
          label="Allowed email domains"
          description="Separated by commas, such as example.com. Empty means any domain. Your own domain must be among them."
          {...text('domains')}
        />
        <Switch
          label="Create users on first sign-in"
          // The caption says what the switch does as it is now set.
          description={
            values.createUsers
              ? 'On: someone new gets a Gatehouse account at their first sign-in, where their provider allows it too.'
              : 'Off: only people who already have an account in Gatehouse can sign in, whatever each provider allows.'
          }
          {...toggle('createUsers')}
        />
        <div aria-live="polite">
          {update.isError && <ProblemAlert title="The settings could not be saved" error={update.error} />}
          {update.isSuccess && (
            <Alert color="green" variant="light" icon={<IconCircleCheck aria-hidden />} title="Saved" styles={{ title: { color: 'var(--mantine-color-text)' } }}>
              They apply from the next sign-in on.
            </Alert>
          )}
        </div>
        <Group>
          <Button type="submit" loading={update.isPending}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** "Who may sign in": the organisation-wide allowed domains and whether unknown people get an account. */
export function SignInSettingsCard() {
  const settings = useSignInSettings();
  return (
    <Section title={TITLE} description={DESCRIPTION} data-testid="sign-in-settings">
      {settings.isPending || isUnauthenticated(settings.error) ? (
        <Stack gap="md" role="status" aria-label="Loading the sign-in settings">
          <Skeleton height={56} />
          <Skeleton height={40} />
        </Stack>
      ) : settings.isError ? (
        <ProblemAlert
          title="We couldn't load the sign-in settings"
          error={settings.error}
          onRetry={isForbidden(settings.error) ? undefined : () => void settings.refetch()}
        />
      ) : (
        <SettingsForm saved={settings.data} />
      )}
      <Text size="xs" c="dimmed">
        A verified email is always required.
      </Text>
    </Section>
  );
}
