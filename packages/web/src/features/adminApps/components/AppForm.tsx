import { Stack, Switch, Textarea, TextInput } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { formFields, useCheckedSubmit } from '../../../components/formFields';
import { FormActions, FormErrors, LockedFields } from '../../../components/FormParts';
import { Section } from '../../../components/Section';
import type { AppDefinition } from '../api/getAdminApps';
import { formProblems, formToApp, type AppFormValues } from '../utils/policyForm';
import { RuleListEditor } from './PolicyEditor';

export interface AppFormProps {
  initialValues: AppFormValues;
  /** A new app: its id can be typed (it is fixed once created). */
  isNew: boolean;
  /** Apps from gatehouse.yaml: shown, nothing can be changed. */
  readOnly?: boolean;
  saving?: boolean;
  /** The failed save, if any; a 400's detail is listed field by field. */
  error?: unknown;
  onSubmit: (app: AppDefinition) => void;
  /** Beside "Save" (e.g. "Cancel", "Delete"). */
  actions?: ReactNode;
}

/** An app's definition: where it lives, how it is proxied, and who may open it (allow and deny rules). */
export function AppForm({ initialValues, isNew, readOnly = false, saving = false, error, onSubmit, actions }: AppFormProps) {
  const [values, setValues] = useState(initialValues);
  const { set, text, toggle } = formFields(values, setValues);
  const { problems, submit } = useCheckedSubmit({
    disabled: readOnly,
    check: () => {
      const app = formToApp(values);
      return { value: app, problems: formProblems(app) };
    },
    onSubmit,
  });

  return (
    <form onSubmit={submit} noValidate aria-label={isNew ? 'New app' : `App ${initialValues.name}`}>
      <LockedFields locked={readOnly || saving} gap="lg">
        <FormErrors title="The app could not be saved" problems={problems} error={error} />
        <Section title="App" description="Where people reach the app, and where Gatehouse forwards them once allowed.">
          <Stack gap="md">
            {isNew && (
              <TextInput
                label="Id"
                description="Lowercase letters, digits and dashes; it can't be changed later."
                required
                {...text('id')}
              />
            )}
            <TextInput label="Name" required {...text('name')} />
            <TextInput label="Public URL" description="The origin people open, such as https://wiki.example.com." required {...text('publicUrl')} />
            <TextInput label="Upstream" description="Where allowed requests go, such as http://10.0.0.5:8080." required {...text('upstream')} />
            <Textarea
              label="Public paths"
              description="Paths anyone may open without signing in, one per line (such as /health or /static/*)."
              autosize
              minRows={2}
              maxRows={8}
              {...text('publicPaths')}
            />
          </Stack>
        </Section>
        <Section title="Proxy options">
          <Stack gap="sm">
            <Switch label="WebSockets" description="Let WebSocket upgrades through." {...toggle('websockets')} />
            <Switch
              label="CORS preflight"
              description="Let CORS preflight requests (OPTIONS) through without signing in."
              {...toggle('corsPreflight')}
            />
            <Switch
              label="Preserve Host"
              description="Send the app's public Host header upstream instead of the upstream's own."
              {...toggle('preserveHost')}
            />
            <Switch
              label="Pass access token"
              description="Send the identity provider's access token upstream as a bearer token. Only for apps that call APIs as the user."
              {...toggle('passAccessToken')}
            />
            <Switch
              label="Compress answers"
              description="Send the app's text, JSON and scripts compressed when the browser accepts it and the app did not compress them. Never event streams."
              {...toggle('compress')}
            />
          </Stack>
        </Section>
        <Section title="Allow rules" description="Someone may open the app when any allow rule matches them and no deny rule does.">
          <RuleListEditor kind="Allow" rules={values.allow} onChange={(rules) => set('allow', rules)} emptyText="No allow rules: nobody can open this app." />
        </Section>
        <Section title="Deny rules" description="A matching deny rule turns someone away, whatever the allow rules say.">
          <RuleListEditor kind="Deny" rules={values.deny} onChange={(rules) => set('deny', rules)} emptyText="No deny rules." />
        </Section>
      </LockedFields>
      <FormActions submitLabel={isNew ? 'Create app' : 'Save'} readOnly={readOnly} saving={saving}>
        {actions}
      </FormActions>
    </form>
  );
}
