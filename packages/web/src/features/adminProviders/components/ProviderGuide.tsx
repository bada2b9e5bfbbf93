import { Anchor, Code, Table, Text, Title, Typography } from '@mantine/core';
import type { ReactNode } from 'react';
import Markdown, { type Components } from 'react-markdown';
import { Link } from 'react-router';
import remarkGfm from 'remark-gfm';
import { pages } from '@gatehouse/contract';
import { SidewaysScroll } from '../../../components/SidewaysScroll';
import { guideLink } from '../utils/providerGuides';
import classes from './ProviderGuide.module.css';

/** A link of a guide: to another guide in the console, to the web in a new tab, or another page of the documentation by its path. */
function GuideAnchor({ href = '', children }: { href?: string | undefined; children?: ReactNode }) {
  const link = guideLink(href);
  if (link.kind === 'guide') {
    return (
      <Anchor component={Link} to={`${pages.adminProviderGuide.href(link.name)}${link.hash}`}>
        {children}
      </Anchor>
    );
  }
  if (link.kind === 'web') {
    return (
      <Anchor href={link.href} target="_blank" rel="noreferrer">
        {children}
      </Anchor>
    );
  }
  return (
    <>
      {children} (<Code>{link.path}</Code> in Gatehouse’s documentation)
    </>
  );
}

/** The guide's Markdown in the console's components; its `#` title is the page's h1. */
const COMPONENTS: Components = {
  h1: ({ children }) => <Title order={1}>{children}</Title>,
  h2: ({ children }) => <Title order={2} size="h3">{children}</Title>,
  h3: ({ children }) => <Title order={3} size="h4">{children}</Title>,
  a: ({ href, children }) => <GuideAnchor href={href}>{children}</GuideAnchor>,
  // Code blocks (YAML) scroll as code does, and take the keyboard's arrows; a table too wide for a phone
  // scrolls in its frame and says so.
  pre: ({ children }) => <pre tabIndex={0}>{children}</pre>,
  table: ({ children }) => (
    <SidewaysScroll label="A table of the guide">
      <Table withTableBorder withColumnBorders verticalSpacing="xs">
        {children}
      </Table>
    </SidewaysScroll>
  ),
  thead: ({ children }) => <Table.Thead>{children}</Table.Thead>,
  tbody: ({ children }) => <Table.Tbody>{children}</Table.Tbody>,
  tr: ({ children }) => <Table.Tr>{children}</Table.Tr>,
  th: ({ children }) => <Table.Th scope="col">{children}</Table.Th>,
  td: ({ children }) => <Table.Td>{children}</Table.Td>,
  p: ({ children }) => <Text component="p">{children}</Text>,
};

/**
 * A provider's setup guide, as docs/providers/ has it. Raw HTML in the Markdown is left out
 * (`skipHtml`), and react-markdown drops script URLs: nothing but the page's text and links renders.
 */
export function ProviderGuide({ markdown }: { markdown: string }) {
  return (
    <Typography className={classes.guide}>
      <Markdown remarkPlugins={[remarkGfm]} components={COMPONENTS} skipHtml>
        {markdown}
      </Markdown>
    </Typography>
  );
}
