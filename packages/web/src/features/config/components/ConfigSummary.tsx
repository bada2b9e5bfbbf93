import { Button, CopyButton, DataList, Text } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { Section } from '../../../components/Section';
import { useConfigState } from '../api/getConfigState';
import { configSourceLabel, entryAsYaml } from '../utils/configSource';

export interface ConfigFact {
  label: string;
  value: ReactNode;
}

export interface ConfigSummaryProps {
  /** The list the entry sits under in the file. */
  list: 'apps' | 'providers';
  /** What the entry says, in the form's words, one row each. */
  facts: ConfigFact[];
  /** The entry as written in the file (no secrets: the console never has them). */
  entry: Record<string, unknown>;
  /** How to change it ("Edit its entry under apps: and restart Gatehouse"). */
  howToChange: ReactNode;
}

/**
 * An entry from the configuration file, read-only: a readable list of what it says (not a form of
 * disabled fields), where it comes from by its real source (the file's path, or the built-in
 * development default), and "Copy as YAML".
 */
export function ConfigSummary({ list, facts, entry, howToChange }: ConfigSummaryProps) {
  const config = useConfigState();
  const source = configSourceLabel(config.data?.file);
  const yaml = entryAsYaml(list, entry);
  return (
    <Section
      title={config.isSuccess ? source.title : 'Defined in the configuration'}
      description={howToChange}
      data-testid="config-summary"
      actions={
        <CopyButton value={yaml} timeout={2000}>
          {({ copied, copy }) => (
            <Button variant="default" size="sm" onClick={copy} leftSection={copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}>
              {copied ? 'Copied' : 'Copy as YAML'}
            </Button>
          )}
        </CopyButton>
      }
    >
      <DataList withDivider labelWidth={180}>
        {facts.map((fact) => (
          <DataList.Item key={fact.label}>
            <DataList.ItemLabel>{fact.label}</DataList.ItemLabel>
            <DataList.ItemValue>
              <Text size="sm" component="div" style={{ overflowWrap: 'anywhere' }}>
                {fact.value}
              </Text>
            </DataList.ItemValue>
          </DataList.Item>
        ))}
      </DataList>
    </Section>
  );
}
