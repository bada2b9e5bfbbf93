import type { ProviderPreset } from '@gatehouse/contract';
import { Group, Radio, SimpleGrid, Stack, Text, ThemeIcon } from '@mantine/core';
import { ProviderLogo } from './ProviderLogo';

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
              <ThemeIcon size={40} radius="xl" variant="light" color="gray" c="var(--mantine-color-text)" aria-hidden>
                <ProviderLogo kind={preset.kind} size={22} />
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
