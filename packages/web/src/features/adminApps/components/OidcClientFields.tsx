import { OIDC_SCOPES, type OidcClientAuthentication, type OidcScope } from '@gatehouse/contract';
import { Group, MultiSelect, Select, SimpleGrid, Stack, Switch, Textarea, TextInput } from '@mantine/core';
import { formFields } from '../../../components/formFields';
import type { OidcField } from '../utils/appProblems';
import { AUTHENTICATION_CHOICES, ID_TOKEN_ALGORITHM_CHOICES, type OidcFormValues } from '../utils/oidcForm';

export interface OidcClientFieldsProps {
  values: OidcFormValues;
  onChange: (values: OidcFormValues) => void;
  /** The app's id: the client id when none is typed. */
  appId: string;
  errors: Partial<Record<OidcField, string>>;
}

const SUBJECT_CHOICES = [
  { value: 'public', label: 'Public: the same for this person in every app' },
  { value: 'pairwise', label: 'Pairwise: a different one per app, which apps cannot match up' },
];

/** An app's OpenID Connect settings: what it is called, how it proves it, where people come back to, what it gets. */
export function OidcClientFields({ values, onChange, appId, errors }: OidcClientFieldsProps) {
  const { set, text, toggle } = formFields(values, onChange);
  const error = (field: OidcField) => ({ error: errors[field] });
  return (
    <Stack gap="md" data-testid="oidc-client-fields">
      <TextInput
        label="Client ID"
        description="What the app is configured with. Left empty, it is the app's id."
        placeholder={appId.trim() || undefined}
        {...text('clientId')}
        {...error('clientId')}
      />
      <Select
        label="Client authentication"
        description="How the app proves itself when it fetches tokens. A secret is made on the app's page once it is saved."
        data={AUTHENTICATION_CHOICES}
        value={values.authentication}
        onChange={(value) => value && set('authentication', value as OidcClientAuthentication)}
        allowDeselect={false}
        {...error('authentication')}
      />
      {values.authentication === 'private_key_jwt' && (
        <>
          <TextInput label="JWKS URL" description="Where the app publishes its public keys (https). Or paste the keys below." {...text('jwksUri')} {...error('jwksUri')} />
          <Textarea label="JWKS" description='The public keys themselves, as JSON: { "keys": [ … ] }.' autosize minRows={2} maxRows={8} ff="monospace" {...text('jwks')} {...error('jwks')} />
        </>
      )}
      <Textarea
        label="Redirect URIs"
        description="Where the app may ask to get people back after they sign in, one per line, exactly as the app sends them (https; plain http only to localhost)."
        required
        autosize
        minRows={2}
        maxRows={8}
        {...text('redirectUris')}
        {...error('redirectUris')}
      />
      <Textarea
        label="Post-logout redirect URIs"
        description="Where the app may send people after signing them out of Gatehouse, one per line."
        autosize
        minRows={1}
        maxRows={6}
        {...text('postLogoutRedirectUris')}
        {...error('postLogoutRedirectUris')}
      />
      <TextInput
        label="Back-channel logout URI"
        description="Where Gatehouse tells the app that a person's session ended (OpenID Connect Back-Channel Logout), so the app signs them out too."
        {...text('backchannelLogoutUri')}
        {...error('backchannelLogoutUri')}
      />
      <MultiSelect
        label="Scopes"
        description="What the app may be told about people: email, name, groups; offline_access lets it refresh tokens while the person's session lasts."
        data={[...OIDC_SCOPES]}
        value={values.scopes}
        onChange={(scopes) => set('scopes', scopes as OidcScope[])}
        {...error('scopes')}
      />
      <Switch
        label="Third-party app"
        description="Ask people to consent before Gatehouse tells the app who they are. Your organisation's own apps skip the question."
        {...toggle('thirdParty')}
      />
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
        <Select label="Subject identifier (sub)" data={SUBJECT_CHOICES} value={values.subject} onChange={(value) => value && set('subject', value as OidcFormValues['subject'])} allowDeselect={false} />
        <Select
          label="ID token algorithm"
          description="RS256 unless the app supports ES256."
          data={ID_TOKEN_ALGORITHM_CHOICES}
          value={values.idTokenAlgorithm}
          onChange={(value) => value && set('idTokenAlgorithm', value as OidcFormValues['idTokenAlgorithm'])}
          allowDeselect={false}
        />
      </SimpleGrid>
      <Switch
        label="Claims in the ID token"
        description="Put email, name and groups in the ID token too, not only at the userinfo endpoint: many apps (Grafana, Argo CD) read groups from the ID token."
        {...toggle('claimsInIdToken')}
      />
      <Group grow align="flex-start" wrap="wrap" gap="md">
        <TextInput label="Access token lifetime" description="Such as 10m." miw={160} {...text('accessTokenLifetime')} {...error('accessTokenLifetime')} />
        <TextInput label="ID token lifetime" description="Such as 1h." miw={160} {...text('idTokenLifetime')} {...error('idTokenLifetime')} />
        <TextInput
          label="Refresh token lifetime"
          description="At most; never longer than the person's Gatehouse session."
          miw={160}
          {...text('refreshTokenLifetime')}
          {...error('refreshTokenLifetime')}
        />
      </Group>
    </Stack>
  );
}
