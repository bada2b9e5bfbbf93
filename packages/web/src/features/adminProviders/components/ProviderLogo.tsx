import { IconBrandWindows, IconKey } from '@tabler/icons-react';
import { siAuth0, siGithub, siGitlab, siGoogle, siKeycloak, siOkta, siOpenid, type SimpleIcon } from 'simple-icons';

/**
 * Each kind's mark from Simple Icons (CC0: the paths are free to ship; the marks stay their owners',
 * shown here only to say which provider a kind is). Microsoft asked Simple Icons to remove its marks,
 * so Entra ID shows Tabler's Windows panes; a kind this version does not know shows a key.
 */
const SIMPLE_ICONS: Readonly<Record<string, SimpleIcon>> = {
  oidc: siOpenid,
  google: siGoogle,
  okta: siOkta,
  keycloak: siKeycloak,
  auth0: siAuth0,
  gitlab: siGitlab,
  github: siGithub,
};

/** Which picture a kind of provider gets: a brand's mark, Microsoft's panes, or the neutral key. */
export function providerLogo(kind: string): { source: 'simple-icons'; icon: SimpleIcon } | { source: 'microsoft' } | { source: 'fallback' } {
  const icon = Object.hasOwn(SIMPLE_ICONS, kind) ? SIMPLE_ICONS[kind] : undefined;
  if (icon) return { source: 'simple-icons', icon };
  return kind === 'entra' ? { source: 'microsoft' } : { source: 'fallback' };
}

/**
 * A kind of provider's logo, in the text's colour (brand colours would vanish on the dark scheme: GitHub's
 * is near black). Decorative, a help to the eye: the kind is named in words where it matters (the kind's
 * card when adding a provider, its settings on the provider's page).
 */
export function ProviderLogo({ kind, size = 20 }: { kind: string; size?: number }) {
  const logo = providerLogo(kind);
  if (logo.source === 'microsoft') return <IconBrandWindows size={size} aria-hidden data-logo={kind} />;
  if (logo.source === 'fallback') return <IconKey size={size} aria-hidden data-logo="fallback" />;
  return (
    <svg viewBox="0 0 24 24" width={size} height={size} fill="currentColor" aria-hidden focusable="false" data-logo={kind}>
      <path d={logo.icon.path} />
    </svg>
  );
}
