import { chmodSync, closeSync, fchmodSync, fstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Gatehouse's data (the database: session hashes, encrypted IdP tokens and signing keys; development
 * keys) is for the user Gatehouse runs as only. A process's umask decides the mode of what it creates
 * (SQLite creates its files 0644 less the umask: readable by everyone under the usual 022), so modes are
 * set explicitly after creating, whatever the umask.
 *
 * The data folder: created 0700. A folder that already exists is the operator's: it is left as it is,
 * with a warning when others may read it (the files in it are 0600 all the same, so such a folder shows
 * their names, not their contents). Gatehouse's own files are always made 0600, existing ones too.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export type PermissionWarning = (details: Record<string, unknown>, message: string) => void;

/** Windows has no POSIX modes (chmod sets the read-only flag only). */
const posix = process.platform !== 'win32';

/** Creates the folder (and missing parents) 0700, or warns when an existing one is open to group or others. */
export function ensurePrivateDir(dir: string, warn: PermissionWarning): void {
  const created = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!posix) return;
  if (created === undefined) {
    const mode = statSync(dir).mode & 0o777;
    if (mode & 0o077) {
      warn(
        { dir, mode: mode.toString(8) },
        `the data folder ${dir} can be read by other users (mode ${mode.toString(8)}); Gatehouse's files in it are 0600, but make it 0700 (chmod 700)`,
      );
    }
    return;
  }
  // mkdirSync's mode is masked by the umask: set the mode of every folder it created exactly.
  const first = path.resolve(created);
  for (let folder = path.resolve(dir); ; folder = path.dirname(folder)) {
    chmodSync(folder, PRIVATE_DIR_MODE);
    if (folder === first || path.dirname(folder) === folder) break;
  }
}

/**
 * Creates the file empty if it does not exist, and makes it 0600 either way (warning when an existing
 * file was open to others). Before SQLite opens it, so that it never exists with the umask's mode.
 */
export function ensurePrivateFile(file: string, warn: PermissionWarning): void {
  const fd = openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    tighten(fd, file, warn);
  } finally {
    closeSync(fd);
  }
}

/** Makes a file 0600 if it exists (SQLite's -wal and -shm files); no-op otherwise. */
export function tightenIfExists(file: string, warn: PermissionWarning): void {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    tighten(fd, file, warn);
  } finally {
    closeSync(fd);
  }
}

function tighten(fd: number, file: string, warn: PermissionWarning): void {
  if (!posix) return;
  const mode = fstatSync(fd).mode & 0o777;
  if (mode === PRIVATE_FILE_MODE) return;
  fchmodSync(fd, PRIVATE_FILE_MODE);
  if (mode & 0o077) warn({ file, mode: mode.toString(8) }, `${file} could be read by other users (mode ${mode.toString(8)}): made it 0600`);
}
