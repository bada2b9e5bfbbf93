import type { ClaimMapping, ClientAuthMethod, ParMode, ProviderDefinition, ProviderPreset } from '@gatehouse/contract';
import { Accordion, PasswordInput, Select, SimpleGrid, Stack, Switch, Textarea, TextInput } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { formFields, useCheckedSubmit } from '../../../components/formFields';
import { FormActions, FormErrors, LockedFields } from '../../../components/FormParts';
import { Section } from '../../../components/Section';
import { conflictOn } from '../../../lib/validationProblems';
import {
  AUTH_METHOD_LABELS,
  formToProvider,
  GENERIC_KIND,
  PAR_LABELS,
  slugFromName,
  type ProviderFormValues,
  type StoredCredentials,
} from '../utils/providerForm';
import { PresetFields } from './PresetFields';
import { RegisterAtProvider } from './RegisterAtProvider';

export interface ProviderFormProps {
  values: ProviderFormValues;
  onChange: (values: ProviderFormValues) => void;
  /** What is stored for a provider being edited; undefined for a new one (its id can then be typed). */
  stored?: StoredCredentials;
  /** Providers from gatehouse.yaml: shown, nothing can be changed. */
  readOnly?: boolean;
  saving?: boolean;
  /** The failed save, if any; a 400's detail is listed field by field, a taken id is shown beside the id. */
  error?: unknown;
  onSubmit: (provider: ProviderDefinition) => void;
  /** Beside "Save" (e.g. "Cancel", "Delete"). */
  actions?: ReactNode;
  /** The portal's origin, for the addresses to register at the IdP. */
  origin: string;
  /** Whether the issuer announced back-channel logout (new providers, from the discovery preview). */
  backchannelLogout?: boolean;
  /** A reason saving is not possible yet (e.g. the issuer changed since its discovery was fetched). */
  blocked?: string | undefined;
  /** The kind's preset: its own fields and its setup guide (undefined while the presets load). */
  preset?: ProviderPreset | undefined;
}

const CLAIM_LABELS: Record<keyof ClaimMapping, string> = {
  email: 'Email claim',
  emailVerified: 'Email verified claim',
  name: 'Name claim',
  picture: 'Picture claim',
  groups: 'Groups claim',
};

/**
 * A provider's definition: its name and id, the addresses to register at the IdP, the client and its
 * write-only credential, who may sign in with it, and (collapsed) claim mapping and request options.
 */
export function ProviderForm({ values, onChange, stored, readOnly = false, saving = false, error, onSubmit, actions, origin, backchannelLogout, blocked, preset }: ProviderFormProps) {
  const generic = values.kind === GENERIC_KIND;
  const isNew = stored === undefined;
  // The id follows the name until someone types an id of their own.
  const [idTouched, setIdTouched] = useState(!isNew || values.id !== slugFromName(values.name));
  const { set, text, toggle } = formFields(values, onChange);
  const claims = formFields(values.claims, (next) => set('claims', next));
  // OpenID Connect kinds have claims to map, an issuer and PAR; another protocol (GitHub's OAuth 2.0) has none of them.
  const openIdConnect = (preset?.protocol ?? 'oidc') === 'oidc';
  const usesKey = values.clientAuthMethod === 'private_key_jwt';
  const name = values.name.trim() || 'this provider';
  // Fields are locked section by section, so the copy buttons between them stay usable.
  const locked = readOnly || saving;
  const { problems, submit } = useCheckedSubmit({
    disabled: readOnly || Boolean(blocked),
    check: () => {
      const { definition, problems } = formToProvider(values, stored, preset);
      return { value: definition, problems };
    },
    onSubmit,
  });
  // An id another provider has (409 `conflict`) is said beside the id field, as the app form does; the
  // alert above the form then only points to it.
  const idTaken = isNew && problems.length === 0 ? conflictOn(error, 'id') : undefined;

  return (
    <form onSubmit={submit} noValidate aria-label={isNew ? 'New provider' : `Provider ${values.name}`}>
      <Stack gap="lg">
          {/* A failed save is reported at the top of the form, far from the button: it is brought into view. */}
          <FormErrors title="The provider could not be saved" problems={idTaken ? ['Fix the field marked below.'] : problems} error={error} scrollIntoView />
          <Section title="Provider" description="How the sign-in page names it, and the id Gatehouse knows it by.">
            <LockedFields locked={locked}>
              <TextInput
                label="Name"
                description={`Shown on the sign-in page as “Sign in with ${values.name.trim() || '…'}”.`}
                required
                value={values.name}
                onChange={(event) => {
                  const next = event.currentTarget.value;
                  onChange({ ...values, name: next, ...(isNew && !idTouched ? { id: slugFromName(next) } : {}) });
                }}
              />
              {isNew && (
                <TextInput
                  label="Id"
                  description="Lowercase letters, digits and dashes. It is part of the redirect URI, so it can't be changed later."
                  required
                  value={values.id}
                  error={idTaken}
                  onChange={(event) => {
                    setIdTouched(true);
                    set('id', event.currentTarget.value);
                  }}
                />
              )}
              {!isNew && generic && (
                <TextInput
                  label="Issuer URL"
                  description="Changing it fetches the new issuer's discovery document; not possible once people have signed in with it."
                  required
                  {...text('issuer')}
                />
              )}
            </LockedFields>
          </Section>
          {preset && <PresetFields preset={preset} values={values.options} onChange={(options) => set('options', options)} locked={locked} />}
          <RegisterAtProvider origin={origin} providerId={values.id} backchannelLogout={backchannelLogout} />
          <Section title="Client" description="The client Gatehouse was registered as at the provider.">
            <LockedFields locked={locked}>
              <TextInput label="Client ID" required {...text('clientId')} />
              <Select
                label="Client authentication"
                data={Object.entries(AUTH_METHOD_LABELS).map(([value, label]) => ({ value, label }))}
                value={values.clientAuthMethod}
                onChange={(value) => value && set('clientAuthMethod', value as ClientAuthMethod)}
                allowDeselect={false}
              />
              {usesKey ? (
                <Textarea
                  label="Private key"
                  description={
                    stored?.hasPrivateKey
                      ? 'A private key is set — leave empty to keep it. It is never shown again.'
                      : 'The private JWK (JSON) Gatehouse signs client assertions with; register its public half at the provider. Stored encrypted, never shown again.'
                  }
                  required={!stored?.hasPrivateKey}
                  autosize
                  minRows={3}
                  maxRows={10}
                  ff="monospace"
                  spellCheck={false}
                  autoComplete="off"
                  {...text('privateKey')}
                />
              ) : (
                <PasswordInput
                  label="Client secret"
                  description={
                    stored?.hasClientSecret
                      ? 'A secret is set — leave empty to keep it. It is never shown again.'
                      : 'Stored encrypted; it is never shown again, not even here.'
                  }
                  placeholder={stored?.hasClientSecret ? 'Leave empty to keep the current secret' : undefined}
                  required={!stored?.hasClientSecret}
                  autoComplete="new-password"
                  {...text('clientSecret')}
                />
              )}
              <TextInput
                label="Scopes"
                description={
                  openIdConnect
                    ? "Separated by spaces; openid is required. offline_access lets Gatehouse re-check people's claims during a session."
                    : 'Separated by spaces, as the provider names them.'
                }
                {...text('scopes')}
              />
            </LockedFields>
          </Section>
          <Section title={`Who may sign in with ${name}`} description="The organisation's own rules (on the Providers page) apply as well: both must admit a person.">
            <LockedFields locked={locked}>
              <TextInput
                label="Allowed email domains"
                description="Separated by commas, such as example.com. Empty means any domain."
                {...text('allowedDomains')}
              />
              <Switch
                label="Create users on first sign-in"
                description="People unknown to Gatehouse get an account the first time they sign in. Leave off for public providers (Google, GitHub) unless domains are set."
                {...toggle('createUsers')}
              />
              <Switch
                label="Link by verified email"
                description="A new identity whose verified email belongs to an existing user joins that user. Only for providers trusted to verify the emails they assert."
                {...toggle('trustEmail')}
              />
              {isNew && (
                <Switch
                  label="Offer on the sign-in page once tested"
                  description="A new provider starts hidden: nobody sees it until a test sign-in with it passes (or you publish it untested). Off: it stays off the sign-in page even then, until you turn it on; admins can still test it."
                  {...toggle('enabled')}
                />
              )}
            </LockedFields>
          </Section>
          <Section
            title={`Groups and claims from ${name}`}
            description="Any provider can assert any group name or claim. Its groups count for app policies, the launcher and the headers apps receive, and its other claims for claim rules, only if you trust them here."
          >
            <LockedFields locked={locked}>
              <Switch
                label="Trust this provider's groups"
                description="On: its groups count as they are (a group “admins” from it is the same as from your own IdP). Leave off for partners' and contractors' providers."
                {...toggle('trustGroups')}
              />
              <TextInput
                label="Group prefix"
                description="Optional, such as partner: — its groups then count only with the prefix (partner:staff), so they can never match rules written for your own groups. Ends with : or /."
                placeholder="partner:"
                spellCheck={false}
                autoComplete="off"
                {...text('groupPrefix')}
              />
              <Switch
                label="Trust this provider's other claims"
                description="On: claim rules (department = finance) read its claims as they are. With a group prefix they count only under prefixed names (partner:department), trusted or not."
                {...toggle('trustClaims')}
              />
            </LockedFields>
          </Section>
          <Accordion variant="separated" radius="md" chevronPosition="left" defaultValue={readOnly ? 'advanced' : null}>
            <Accordion.Item value="advanced">
              <Accordion.Control>{openIdConnect ? 'Advanced: claim mapping and request options' : 'Advanced: request options'}</Accordion.Control>
              <Accordion.Panel>
                <LockedFields locked={locked}>
                  {openIdConnect && (
                    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
                      {(Object.keys(CLAIM_LABELS) as Array<keyof ClaimMapping>).map((claim) => (
                        <TextInput
                          key={claim}
                          label={CLAIM_LABELS[claim]}
                          {...claims.text(claim)}
                        />
                      ))}
                    </SimpleGrid>
                  )}
                  {!generic && openIdConnect && (
                    <TextInput
                      label="Issuer URL"
                      description={`Leave empty: ${preset?.label ?? 'this kind'} has an issuer of its own. Only a loopback address may replace it (a local stand-in for testing).`}
                      type="url"
                      spellCheck={false}
                      {...text('issuer')}
                    />
                  )}
                  {openIdConnect && (
                    <>
                      <Switch
                        label="Treat emails as verified when the provider does not say"
                        description="Only for providers such as Microsoft Entra ID that never send email_verified."
                        {...toggle('assumeEmailVerified')}
                      />
                      <Select
                        label="Pushed authorization requests"
                        data={Object.entries(PAR_LABELS).map(([value, label]) => ({ value, label }))}
                        value={values.pushedAuthorizationRequests}
                        onChange={(value) => value && set('pushedAuthorizationRequests', value as ParMode)}
                        allowDeselect={false}
                      />
                    </>
                  )}
                  <Textarea
                    label="Extra authorization parameters"
                    description="name=value, one per line (such as prompt=select_account or hd=example.com)."
                    autosize
                    minRows={2}
                    maxRows={6}
                    {...text('authorizationParams')}
                  />
                </LockedFields>
              </Accordion.Panel>
            </Accordion.Item>
          </Accordion>
      </Stack>
      <FormActions submitLabel={isNew ? 'Create provider' : 'Save'} readOnly={readOnly} saving={saving} blocked={blocked}>
        {actions}
      </FormActions>
    </form>
  );
}
