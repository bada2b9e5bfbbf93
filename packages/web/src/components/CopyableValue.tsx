import { ActionIcon, CopyButton, Group, Stack, Text, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { BreakableUrl } from './BreakableUrl';

export interface CopyableValueProps {
  label: string;
  value: string;
  description?: string;
}

/** A labelled value to paste elsewhere (a redirect URI to register at the IdP), with a copy button. */
export function CopyableValue({ label, value, description }: CopyableValueProps) {
  return (
    <Stack gap={2}>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      {description && (
        <Text size="xs" c="dimmed">
          {description}
        </Text>
      )}
      <Group gap="xs" wrap="nowrap" align="center">
        <Text size="sm" ff="monospace" miw={0} data-testid={`copy-${label.toLowerCase().replace(/\W+/g, '-')}`}>
          <BreakableUrl value={value} />
        </Text>
        <CopyButton value={value} timeout={2000}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy'} withArrow position="right" events={{ hover: true, focus: true, touch: false }}>
              <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={copied ? `${label} copied` : `Copy ${label.toLowerCase()}`}>
                {copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}
