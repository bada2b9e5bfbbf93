import { ActionIcon, Button, Fieldset, Group, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { formFields } from '../../../components/formFields';
import { isRuleKind, newRule, RULE_KIND_LABELS, RULE_KINDS, type RuleFormValues } from '../utils/policyForm';

const KIND_OPTIONS = RULE_KINDS.map((kind) => ({ value: kind, label: RULE_KIND_LABELS[kind] }));

const LIST_HINTS: Record<string, string> = {
  emails: 'Email addresses, separated by commas or new lines',
  domains: 'Email domains such as example.com, separated by commas or new lines',
  groups: 'Group names from the identity provider, separated by commas or new lines',
  roles: 'Gatehouse roles (admin), separated by commas or new lines',
};

function RuleRow({
  rule,
  label,
  error,
  onChange,
  onRemove,
}: {
  rule: RuleFormValues;
  /** "Allow rule 1": the fieldset's legend, and what the remove button names. */
  label: string;
  /** What is wrong with this rule, in words. */
  error: string | undefined;
  onChange: (next: RuleFormValues) => void;
  onRemove: () => void;
}) {
  const { set, text } = formFields(rule, onChange);
  // The rule's problem is its value's: shown under the value's input, and read out with it.
  const invalid = { error };
  return (
    <Fieldset legend={label} variant="filled" data-rule-kind={rule.kind} data-rule-error={error ? '' : undefined}>
      <Group align="flex-start" gap="sm" wrap="wrap">
        <Select
          label="Kind"
          data={KIND_OPTIONS}
          value={rule.kind}
          allowDeselect={false}
          onChange={(value) => {
            if (isRuleKind(value)) set('kind', value);
          }}
          w={220}
        />
        {rule.kind === 'anyUser' ? (
          <Text size="sm" c="dimmed" pt={30} style={{ flex: '1 1 240px' }}>
            Anyone who signs in to Gatehouse.
          </Text>
        ) : rule.kind === 'claim' ? (
          <>
            <TextInput label="Claim name" {...text('claimName')} {...invalid} style={{ flex: '1 1 160px' }} />
            <TextInput label="Claim value" {...text('claimValue')} style={{ flex: '1 1 160px' }} />
          </>
        ) : (
          <Textarea
            label={RULE_KIND_LABELS[rule.kind]}
            description={LIST_HINTS[rule.kind]}
            autosize
            minRows={1}
            maxRows={6}
            {...text('values')}
            {...invalid}
            style={{ flex: '1 1 260px' }}
          />
        )}
        <ActionIcon variant="subtle" color="red" size="lg" mt={26} aria-label={`Remove ${label.toLowerCase()}`} onClick={onRemove}>
          <IconTrash size={18} aria-hidden />
        </ActionIcon>
      </Group>
      {error && rule.kind === 'anyUser' && (
        <Text size="sm" c="var(--mantine-color-error)" mt="xs">
          {error}
        </Text>
      )}
    </Fieldset>
  );
}

export interface RuleListEditorProps {
  /** "Allow" or "Deny". */
  kind: 'Allow' | 'Deny';
  rules: RuleFormValues[];
  onChange: (rules: RuleFormValues[]) => void;
  /** Shown when there are no rules. */
  emptyText: string;
  /** What is wrong with the list as a whole ("Add at least one allow rule"). */
  error?: string | undefined;
  /** What is wrong with each rule, by its place in the list. */
  ruleErrors?: Record<number, string>;
}

/** One list of rules (allow or deny): a kind and its value per rule, rules added and removed. */
export function RuleListEditor({ kind, rules, onChange, emptyText, error, ruleErrors = {} }: RuleListEditorProps) {
  return (
    <Stack gap="sm">
      {rules.length === 0 && (
        <Text size="sm" c="dimmed">
          {emptyText}
        </Text>
      )}
      {error && (
        <Text size="sm" c="var(--mantine-color-error)" data-list-error="">
          {error}
        </Text>
      )}
      {rules.map((rule, index) => (
        <RuleRow
          key={rule.key}
          rule={rule}
          label={`${kind} rule ${index + 1}`}
          error={ruleErrors[index]}
          onChange={(next) => onChange(rules.map((r) => (r.key === rule.key ? next : r)))}
          onRemove={() => onChange(rules.filter((r) => r.key !== rule.key))}
        />
      ))}
      <div>
        <Button variant="default" size="xs" leftSection={<IconPlus size={14} aria-hidden />} onClick={() => onChange([...rules, newRule()])}>
          Add {kind.toLowerCase()} rule
        </Button>
      </div>
    </Stack>
  );
}
