import { Fragment } from 'react';

/**
 * A URL that wraps only where a reader expects it to, after a `/`, `.`, `?`, `&` or `=`
 * (`https://login.` / `example.com/` / `realms/`), never in the middle of a name; a part longer than the
 * whole line still breaks (`overflow-wrap: break-word`) rather than leave the screen. Breaking anywhere
 * (`overflow-wrap: anywhere`) let a table squeeze an issuer into a column a few letters wide.
 */
export function BreakableUrl({ value }: { value: string }) {
  const parts = value.split(/(?<=[/.?&=])(?=[^/])/);
  return (
    <span style={{ overflowWrap: 'break-word' }}>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {index > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </span>
  );
}
