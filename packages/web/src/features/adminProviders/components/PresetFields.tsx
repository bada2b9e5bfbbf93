import { pages, type ProviderPreset } from '@gatehouse/contract';
import { Anchor, Switch, Text, Textarea, TextInput } from '@mantine/core';
import { LockedFields } from '../../../components/FormParts';
import { Section } from '../../../components/Section';
import { presetOptionFields } from '../utils/providerForm';
import { guideName } from '../utils/providerGuides';

export interface PresetFieldsProps {
  preset: ProviderPreset;
  values: Record<string, string | boolean>;
  onChange: (values: Record<string, string | boolean>) => void;
  locked: boolean;
}

/**
 * A preset's setup guide: the console's own page of it (from docs/providers/, opened in a new tab so the
 * form being filled in stays as it is), a web address as a link, else the page of the documentation by name.
 */
export function PresetDocs({ preset }: { preset: Pick<ProviderPreset, 'docs' | 'label'> }) {
  const guide = guideName(preset.docs);
  if (guide || /^https:\/\//.test(preset.docs)) {
    return (
      <Text size="sm">
        <Anchor href={guide ? pages.adminProviderGuide.href(guide) : preset.docs} target="_blank" rel={guide ? undefined : 'noreferrer'} fw={600} data-testid="setup-guide">
          How to register Gatehouse at {preset.label}
        </Anchor>{' '}
        <Text span size="sm" c="dimmed">
          (setup guide, opens in a new tab)
        </Text>
      </Text>
    );
  }
  return (
    <Text size="sm">
      How to register Gatehouse at {preset.label}: <code>{preset.docs}</code> in Gatehouse’s documentation.
    </Text>
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
