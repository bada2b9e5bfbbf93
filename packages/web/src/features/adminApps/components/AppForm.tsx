import { Checkbox, MultiSelect, Radio, Stack, Switch, Text, Textarea, TextInput } from '@mantine/core';
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { formFields, useCheckedSubmit } from '../../../components/formFields';
import { FormActions, FormErrors, LockedFields } from '../../../components/FormParts';
import { Section } from '../../../components/Section';
import { fieldProblems } from '../../../lib/validationProblems';
import type { AppDefinition } from '../api/getAdminApps';
import { appFormErrors, formProblems, hasAppFormErrors } from '../utils/appProblems';
import { formToApp, type AppFormValues, type ServedBy } from '../utils/policyForm';
import { OidcClientFields } from './OidcClientFields';
import { RuleListEditor } from './PolicyEditor';

/** An identity provider the app may take access tokens from. */
export interface TokenProvider {
  id: string;
  name: string;
}

export interface AppFormProps {
  initialValues: AppFormValues;
  /** The identity providers there are, for "Pass access tokens from" (the page reads them). */
  providers: readonly TokenProvider[];
  /** A new app: its id can be typed (it is fixed once created). */
  isNew: boolean;
  /** Apps from gatehouse.yaml: shown, nothing can be changed. */
  readOnly?: boolean;
  saving?: boolean;
  /** The failed save, if any; a 400's detail is listed field by field, a taken id or host is shown beside its field. */
  error?: unknown;
  onSubmit: (app: AppDefinition) => void;
  /** Each change, as typed (the page's policy tester tests the draft). */
  onValuesChange?: (values: AppFormValues) => void;
  /** Beside "Save" (e.g. "Cancel", "Delete"). */
  actions?: ReactNode;
}

/** An app's definition: where it lives, how it is proxied, and who may open it (allow and deny rules). */
export function AppForm({ initialValues, providers, isNew, readOnly = false, saving = false, error, onSubmit, onValuesChange, actions }: AppFormProps) {
  const [values, setValues] = useState(initialValues);
  const change = (next: AppFormValues) => {
    setValues(next);
    onValuesChange?.(next);
  };
  const { set, text, toggle } = formFields(values, change);
  const { problems, submit, attempt } = useCheckedSubmit({
    disabled: readOnly,
    check: () => {
      const app = formToApp(values);
      return { value: app, problems: formProblems(app) };
    },
    onSubmit,
  });
  // The form's own findings while there are any, else the server's: each beside its field, in words.
  const errors = useMemo(() => appFormErrors(problems.length > 0 ? problems : fieldProblems(error)), [problems, error]);
  const formRef = useRef<HTMLFormElement>(null);
  // After each failed submit (or a refused save), the first field to fix takes the focus.
  useEffect(() => {
    if (!hasAppFormErrors(errors)) return;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"], [data-rule-error] textarea, [data-rule-error] input')?.focus();
  }, [errors, attempt]);
  // Above the form: what belongs to no field, and a pointer to the fields marked below.
  const marked = hasAppFormErrors({ ...errors, other: [] });
  const summary = [...errors.other, ...(marked ? ['Fix the fields marked below.'] : [])];
  const fieldError = (field: keyof typeof errors.fields) => ({ error: errors.fields[field] });
  // Every provider there is, and any the app names that is gone (shown by its id, so it can be removed).
  const tokenChoices = [
    ...providers.map((provider) => ({ value: provider.id, label: `${provider.name} (${provider.id})` })),
    ...values.passAccessToken.filter((id) => !providers.some((provider) => provider.id === id)).map((id) => ({ value: id, label: id })),
  ];

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label={isNew ? 'New app' : `App ${initialValues.name}`}>
      <LockedFields locked={readOnly || saving} gap="lg">
        <FormErrors title="The app could not be saved" problems={summary} error={summary.length > 0 || fieldProblems(error).length > 0 ? undefined : error} />
        <Section title="App" description="What the app is called, and where people reach it.">
          <Stack gap="md">
            {isNew && (
              <TextInput
                label="Id"
                description="Lowercase letters, digits and dashes; it can't be changed later."
                required
                {...text('id')}
                {...fieldError('id')}
              />
            )}
            <TextInput label="Name" required {...text('name')} {...fieldError('name')} />
            <TextInput label="Public URL" description="The origin people open, such as https://wiki.example.com." required {...text('publicUrl')} {...fieldError('publicUrl')} />
          </Stack>
        </Section>
        <Section
          title="How is this app protected?"
          description="Gatehouse can guard the app's host, sign people in to the app with OpenID Connect, or both. The rules below decide who may, either way."
        >
          <Stack gap="md">
            <Checkbox
              label="Gatehouse guards its host"
              description="Every request to the app's host is checked: Gatehouse serves the app as its reverse proxy, or your nginx, Caddy or Traefik asks Gatehouse (forward-auth)."
              {...toggle('guarded')}
            />
            {values.guarded && (
              <Stack gap="md" pl={{ base: 0, xs: 'xl' }}>
                <Radio.Group
                  label="Served by"
                  value={values.servedBy}
                  onChange={(servedBy) => set('servedBy', servedBy as ServedBy)}
                >
                  <Stack gap="xs" mt="xs">
                    <Radio
                      value="gatehouse"
                      label="Gatehouse"
                      description="Point the app's DNS name at Gatehouse: it checks each request and forwards the allowed ones to the upstream."
                    />
                    <Radio
                      value="proxy"
                      label="nginx, Caddy or Traefik"
                      description="Your proxy serves the app and asks Gatehouse about every request (forward-auth). No upstream; the app's page shows the proxy's configuration."
                    />
              </Stack>
            </Radio.Group>
            {values.servedBy === 'gatehouse' && (
              <TextInput label="Upstream" description="Where allowed requests go, such as http://10.0.0.5:8080." required {...text('upstream')} {...fieldError('upstream')} />
            )}
            <Textarea
              label="Public paths"
              description="Paths anyone may open without signing in, one per line (such as /health or /static/*)."
              autosize
              minRows={2}
              maxRows={8}
              {...text('publicPaths')}
              {...fieldError('publicPaths')}
            />
              </Stack>
            )}
            <Checkbox
              label="Signs people in with OpenID Connect"
              description="The app (Grafana, Gitea, Nextcloud, Argo CD, Apache's mod_auth_openidc…) has a sign-in of its own, with Gatehouse as its OpenID Provider: one sign-in, the same rules, and signing out of Gatehouse signs out of the app."
              {...toggle('signsInWithOidc')}
            />
            {values.signsInWithOidc && (
              <Stack gap="md" pl={{ base: 0, xs: 'xl' }}>
                <OidcClientFields values={values.oidc} onChange={(oidc) => set('oidc', oidc)} appId={values.id || initialValues.id} errors={errors.oidc} />
              </Stack>
            )}
            {errors.protection && (
              <Text size="sm" c="red" role="alert">
                Choose at least one: an app Gatehouse neither guards nor signs people in to is not protected.
              </Text>
            )}
          </Stack>
        </Section>
        {values.guarded && (
          <Section title="Proxy options">
            <Stack gap="sm">
              <Switch
                label="CORS preflight"
                description="Let CORS preflight requests (OPTIONS) through without signing in."
                {...toggle('corsPreflight')}
              />
              {/* What Gatehouse does as the app's reverse proxy; a proxy of the operator's decides these itself. */}
              {values.servedBy === 'gatehouse' && (
                <>
                  <Switch label="WebSockets" description="Let WebSocket upgrades through." {...toggle('websockets')} />
                  <Switch
                    label="Preserve Host"
                    description="Send the app's public Host header upstream instead of the upstream's own."
                    {...toggle('preserveHost')}
                  />
                  <MultiSelect
                    label="Pass access tokens from"
                    description="For apps that call these providers' APIs as the user: a person signed in with one of them has its access token sent upstream as a bearer token; with any other provider, none is. A token is a credential there, so name only the providers whose APIs the app calls."
                    placeholder={values.passAccessToken.length === 0 ? 'No provider: no token is sent' : undefined}
                    data={tokenChoices}
                    value={values.passAccessToken}
                    onChange={(ids) => set('passAccessToken', ids)}
                    clearable
                    searchable
                  />
                  <Switch
                    label="Compress answers"
                    description="Send the app's text, JSON and scripts compressed when the browser accepts it, the request comes from the app's own pages and the app did not compress them. Leave it off if a page shows a secret (a token, a key) next to text a request chose, such as a search term: the compressed size can give the secret away (BREACH)."
                    {...toggle('compress')}
                  />
                </>
              )}
            </Stack>
          </Section>
        )}
        <Section title="Allow rules" description="Someone may open the app when any allow rule matches them and no deny rule does.">
          <RuleListEditor
            kind="Allow"
            rules={values.allow}
            onChange={(rules) => set('allow', rules)}
            emptyText="No allow rules: nobody can open this app."
            error={errors.lists.allow}
            ruleErrors={errors.rules.allow}
          />
        </Section>
        <Section title="Deny rules" description="A matching deny rule turns someone away, whatever the allow rules say.">
          <RuleListEditor
            kind="Deny"
            rules={values.deny}
            onChange={(rules) => set('deny', rules)}
            emptyText="No deny rules."
            error={errors.lists.deny}
            ruleErrors={errors.rules.deny}
          />
        </Section>
      </LockedFields>
      <FormActions submitLabel={isNew ? 'Create app' : 'Save'} readOnly={readOnly} saving={saving}>
        {actions}
      </FormActions>
    </form>
  );
}
