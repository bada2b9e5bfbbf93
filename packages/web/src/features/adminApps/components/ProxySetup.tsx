import type { ForwardAuthSetup } from '@gatehouse/contract';
import { Alert, Anchor, Button, Code, CopyButton, Group, Skeleton, Stack, Tabs, Text } from '@mantine/core';
import { Section } from '../../../components/Section';
import { ProblemAlert } from '../../../components/ProblemAlert';
import { useForwardAuthSetup } from '../api/getForwardAuthSetup';
import { APP_UPSTREAM, proxySnippets, type ProxiedAppFacts, type ProxyFile } from '../utils/proxySnippets';

/** One file to copy, with a button that copies it. */
export function FileBlock({ file }: { file: ProxyFile }) {
  return (
    <Stack gap={4}>
      <Group justify="space-between" gap="xs" wrap="nowrap">
        <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere', flex: 1, minWidth: 0 }}>
          {file.name}
        </Text>
        <CopyButton value={file.text}>
          {({ copied, copy }) => (
            <Button size="compact-sm" variant="light" onClick={copy} aria-label={`Copy ${file.name}`} style={{ flexShrink: 0 }}>
              {copied ? 'Copied' : 'Copy'}
            </Button>
          )}
        </CopyButton>
      </Group>
      {/* A region of its own, so a keyboard can scroll long lines on a narrow screen. */}
      <Code block tabIndex={0} role="region" aria-label={file.name} style={{ maxHeight: 420, overflow: 'auto', whiteSpace: 'pre' }}>
        {file.text}
      </Code>
    </Stack>
  );
}

/** Whether the proxies Gatehouse believes let a proxy's checks through, in words, with what to change. */
export function TrustedProxiesHint({ setup }: { setup: ForwardAuthSetup }) {
  const list = setup.trustedProxies.join(', ');
  if (setup.trustedProxies.length === 0) {
    return (
      <Alert color="yellow" title="No proxy is trusted yet">
        Gatehouse believes the <code>X-Forwarded-*</code> headers that describe a request only from the addresses in{' '}
        <code>trustedProxies</code>, and that list is empty: every check your proxy makes is refused (403). Add the address your proxy
        connects to Gatehouse from (<code>trustedProxies: [&quot;127.0.0.1&quot;]</code> when both run on one machine) to the configuration
        file, then restart Gatehouse.
      </Alert>
    );
  }
  return (
    <Text size="sm">
      Gatehouse believes checks from {setup.trustedProxiesDefault ? 'proxies on this machine' : 'these addresses'} (
      <code>trustedProxies</code>: {list}
      {setup.trustedProxiesDefault ? ', development mode’s default' : ''}). A proxy elsewhere needs its address there, in the configuration
      file, and a restart.
    </Text>
  );
}

/**
 * How to put the app behind nginx, Caddy or Traefik (forward-auth): the shipped configuration files,
 * filled in for this app, to copy; whom Gatehouse believes as a proxy; and the guide that explains
 * every line.
 */
export function ProxySetup({ app }: { app: ProxiedAppFacts }) {
  const setup = useForwardAuthSetup();
  const servedElsewhere = !app.upstream;
  return (
    <Section
      title="Behind nginx, Caddy or Traefik"
      description={
        servedElsewhere
          ? 'Your proxy serves this app and asks Gatehouse about every request. Put this configuration in it.'
          : 'Gatehouse serves this app itself. To keep your own proxy in front instead, it asks Gatehouse about every request with this configuration.'
      }
    >
      {setup.isPending ? (
        <Skeleton height={160} radius="md" aria-label="Loading the proxy configuration" />
      ) : setup.isError ? (
        <ProblemAlert title="We couldn't load what the proxy needs" error={setup.error} onRetry={() => void setup.refetch()} />
      ) : (
        <Stack gap="md">
          <TrustedProxiesHint setup={setup.data} />
          <Tabs defaultValue="nginx" keepMounted={false}>
            <Tabs.List>
              {proxySnippets(app, setup.data).map((snippet) => (
                <Tabs.Tab key={snippet.proxy} value={snippet.proxy}>
                  {snippet.proxy}
                </Tabs.Tab>
              ))}
            </Tabs.List>
            {proxySnippets(app, setup.data).map((snippet) => (
              <Tabs.Panel key={snippet.proxy} value={snippet.proxy} pt="md">
                <Stack gap="md">
                  <Text size="sm">
                    Gatehouse at <code>{setup.data.gatehouseAddress}</code>, where it listens: change it if your proxy reaches Gatehouse
                    another way.
                    {snippet.unfilled.includes(APP_UPSTREAM) && (
                      <>
                        {' '}
                        Replace <code>{APP_UPSTREAM}</code> with where your proxy reaches the app, such as <code>{snippet.upstreamExample}</code>.
                      </>
                    )}{' '}
                    Every line is explained in{' '}
                    <Anchor href={`/${snippet.guide}`} target="_blank" rel="noreferrer" underline="always">
                      {snippet.guide}
                    </Anchor>
                    .
                  </Text>
                  {snippet.files.map((file) => (
                    <FileBlock key={file.name} file={file} />
                  ))}
                </Stack>
              </Tabs.Panel>
            ))}
          </Tabs>
        </Stack>
      )}
    </Section>
  );
}
