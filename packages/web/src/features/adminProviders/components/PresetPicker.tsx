import type { ProviderPreset } from '@gatehouse/contract';
import { Group, Radio, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';

/** A preset's mark: its initials as text (no logo is fetched from anywhere). */
export function presetMonogram(label: string): string {
  const words = label.split(/[\s-]+/).filter((word) => /^[A-Za-z0-9]/.test(word));
  if (words.length === 0) return '?';
  // One word: its capitals ("GitLab" → "GL", "Google" → "G"), so two kinds starting alike differ.
  if (words.length === 1) return (words[0]!.match(/[A-Z]/g) ?? [words[0]![0]!.toUpperCase()]).slice(0, 2).join('');
  // "OpenID Connect" → "OC"; "Microsoft Entra ID" → "ME".
  return words
    .slice(0, 2)
    .map((word) => word[0]!.toUpperCase())
    .join('');
}

export interface PresetPickerProps {
  presets: ProviderPreset[];
  value: string | undefined;
  onChange: (kind: string) => void;
}

/** "Add provider" starts here: one card per kind, a radio group (arrow keys move between them). */
export function PresetPicker({ presets, value, onChange }: PresetPickerProps) {
  return (
    <Radio.Group value={value ?? null} onChange={onChange} label="Kind of provider" description="Each kind knows its provider's addresses and quirks; OpenID Connect works with any other.">
      <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="sm" mt="sm">
        {presets.map((preset) => (
          <Radio.Card key={preset.kind} value={preset.kind} radius="md" p="md" data-kind={preset.kind} aria-label={preset.label}>
            <Group wrap="nowrap" align="flex-start" gap="sm">
              <ThemeIcon size={40} radius="xl" variant="light" aria-hidden>
                <Text fw={700} size="sm">
                  {presetMonogram(preset.label)}
                </Text>
              </ThemeIcon>
              <Stack gap={2} miw={0}>
                <Group gap="xs" wrap="nowrap">
                  <Radio.Indicator size="xs" />
                  <Text fw={600}>{preset.label}</Text>
                </Group>
                <Text size="sm" c="dimmed">
                  {preset.description}
                </Text>
              </Stack>
            </Group>
          </Radio.Card>
        ))}
      </SimpleGrid>
    </Radio.Group>
  );
}
