/**
 * Rules a set of apps must keep together (in the config file, and with the console's apps added):
 * unique ids, one app per host, never the portal's host, the portal's scheme (cookies and the
 * handshake depend on it). Returns each problem with the index of the app it concerns.
 */
export interface AppSetIssue {
  index: number;
  field: 'id' | 'publicUrl';
  message: string;
  /** The id or the host is another app's: the console answers 409 `conflict` for it, not 400. */
  conflict: boolean;
}

/** The words for an id already taken (also when the database finds it, in a race the set check missed). */
export function duplicateAppId(id: string): string {
  return `duplicate app id "${id}"`;
}

export function appSetIssues(portalUrl: string, apps: ReadonlyArray<{ id: string; publicUrl: string }>): AppSetIssue[] {
  // URLs that do not parse are reported by the schema itself; nothing to compare them with here.
  if (!URL.canParse(portalUrl)) return [];
  const portal = new URL(portalUrl);
  const ids = new Set<string>();
  const hosts = new Set<string>();
  const issues: AppSetIssue[] = [];
  apps.forEach((app, index) => {
    if (!URL.canParse(app.publicUrl)) return;
    const url = new URL(app.publicUrl);
    if (ids.has(app.id)) issues.push({ index, field: 'id', message: duplicateAppId(app.id), conflict: true });
    if (hosts.has(url.host)) issues.push({ index, field: 'publicUrl', message: `another app already uses ${url.host}`, conflict: true });
    if (url.host === portal.host) issues.push({ index, field: 'publicUrl', message: 'must differ from the portal’s publicUrl', conflict: false });
    if (url.protocol !== portal.protocol) issues.push({ index, field: 'publicUrl', message: 'must use the same scheme as the portal', conflict: false });
    ids.add(app.id);
    hosts.add(url.host);
  });
  return issues;
}
