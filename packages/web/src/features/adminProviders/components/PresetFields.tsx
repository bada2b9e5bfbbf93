import type { ProviderPreset } from '@gatehouse/contract';
import { Anchor, Switch, Textarea, TextInput } from '@mantine/core';
import { LockedFields } from '../../../components/FormParts';
import { Section } from '../../../components/Section';
import { presetOptionFields } from '../utils/providerForm';

export interface PresetFieldsProps {
  preset: ProviderPreset;
  values: Record<string, string | boolean>;
  onChange: (values: Record<string, string | boolean>) => void;
  locked: boolean;
}

/**
 * A preset's setup guide: a link to it, an address elsewhere or a page of Gatehouse's documentation
 * (`docs/…`, which the server serves to admins at the same path).
 */
export function PresetDocs({ preset }: { preset: Pick<ProviderPreset, 'docs' | 'label'> }) {
  const href = /^https:\/\//.test(preset.docs) ? preset.docs : `/${preset.docs}`;
  return (
    <Anchor href={href} target="_blank" rel="noreferrer" size="sm">
      How to register Gatehouse at {preset.label}
    </Anchor>
  );
}

/** The kind's own fields (a Workspace domain list, a tenant), as its preset describes them. */
export function PresetFields({ preset, values, onChange, locked }: PresetFieldsProps) {
  const fields = presetOptionFields(preset);
  return (
    <Section title={`${preset.label} settings`} description={preset.description}>
      <PresetDocs preset={preset} />
      {fields.length > 0 && (
        <LockedFields locked={locked}>
          {fields.map((field) => {
            const value = values[field.name];
            const common = { key: field.name, label: field.label, description: field.help, required: field.required, placeholder: field.placeholder ?? undefined };
            if (field.input === 'boolean') {
              const { key, label, description } = common;
              return <Switch key={key} label={label} description={description} checked={value === true} onChange={(event) => onChange({ ...values, [field.name]: event.currentTarget.checked })} />;
            }
            const text = typeof value === 'string' ? value : '';
            const update = (next: string) => onChange({ ...values, [field.name]: next });
            if (field.input === 'list') {
              const { key, ...props } = common;
              return <Textarea key={key} {...props} autosize minRows={2} maxRows={6} spellCheck={false} value={text} onChange={(event) => update(event.currentTarget.value)} />;
            }
            const { key, ...props } = common;
            return <TextInput key={key} {...props} type={field.input === 'url' ? 'url' : 'text'} spellCheck={false} value={text} onChange={(event) => update(event.currentTarget.value)} />;
          })}
        </LockedFields>
      )}
    </Section>
  );
}
