import path from 'node:path';
import { closestMatch } from 'leven';
import { isAlias, isCollection, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type Pair } from 'yaml';
import type { z } from 'zod';

/**
 * What is wrong with a configuration file, said as a compiler says it: every problem at once, each
 * once, at its line and column (`gatehouse.yaml:12:5: providers[0].issuer: must be https …`), with the
 * line as written and a caret under what is wrong. The positions come from the YAML library's own
 * node ranges (`yaml`'s parseDocument and LineCounter), for syntax errors its own error positions.
 *
 * The line shown is the file as written (a `${NAME}` reference, never the value it stands for); the
 * values of secret keys in it (client secrets, keys, passwords, credentials in a URL) are shown as
 * `***`: check-config's output ends up in CI logs.
 */

export type ConfigPath = ReadonlyArray<string | number>;

export interface ConfigProblem {
  severity: 'error' | 'warning';
  /**
   * The key it is about (`['providers', 0, 'issuer']`; `[]`: the document as a whole); absent for a
   * problem of the file's YAML syntax, which is about no key.
   */
  path?: ConfigPath | undefined;
  message: string;
  /** Where in the file, when it came from one and the key (or its nearest enclosing one) is in it. */
  at?: SourceSpot | undefined;
  /** The environment variable its value came from instead of the file (`GATEHOUSE_MODE`, …). */
  env?: string | undefined;
}

/** A place in the file, 1-based, with its line as written (secret values masked) and what to underline. */
export interface SourceSpot {
  line: number;
  column: number;
  text: string;
  /** Where the caret goes in `text` (1-based; differs from `column` only after a masked value) and its width. */
  caret: number;
  width: number;
}

/** `providers[0].issuer`; the empty path is `(root)`. */
export function formatPath(segments: ConfigPath): string {
  const text = segments.reduce<string>((out, segment) => (typeof segment === 'number' ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment), '');
  return text || '(root)';
}

/**
 * One problem on one line: `gatehouse.yaml:12:5: providers[0].issuer: must be https …` (`warning:`
 * after the position for a warning). `name` is the file as the operator names it; without one (a
 * configuration that came from no file) the line is `path: message`.
 */
export function problemLine(problem: ConfigProblem, name?: string): string {
  const where = name && problem.at ? `${name}:${problem.at.line}:${problem.at.column}: ` : name && !problem.env ? `${name}: ` : '';
  const severity = problem.severity === 'warning' ? 'warning: ' : '';
  const key = problem.path ? `${formatPath(problem.path)}: ` : '';
  const env = problem.env ? ` (from the environment variable ${problem.env})` : '';
  return `${where}${severity}${key}${problem.message}${env}`;
}

/**
 * Every problem as a compiler prints it: its line, then the file's line and a caret under the spot;
 * then a count. Plain text (it is read in terminals, CI logs and journald alike).
 */
export function renderProblems(problems: readonly ConfigProblem[], name: string | undefined): string[] {
  const lines: string[] = [];
  const width = Math.max(0, ...problems.map((problem) => String(problem.at?.line ?? '').length));
  for (const problem of problems) {
    lines.push(problemLine(problem, name));
    if (!problem.at) continue;
    const { line, text, caret, width: underline } = problem.at;
    const gutter = ' '.repeat(width);
    lines.push(` ${String(line).padStart(width)} | ${text}`);
    // The caret's indent copies the line's own tabs, so it sits under the spot whatever the tab width.
    const indent = [...text.slice(0, caret - 1)].map((char) => (char === '\t' ? '\t' : ' ')).join('');
    lines.push(` ${gutter} | ${indent}^${'~'.repeat(Math.max(0, underline - 1))}`);
  }
  return lines;
}

/** "2 errors and 1 warning", "1 error", "no problems". */
export function countProblems(problems: readonly ConfigProblem[]): string {
  const count = (severity: ConfigProblem['severity']) => problems.filter((problem) => problem.severity === severity).length;
  const words = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  const [errors, warnings] = [count('error'), count('warning')];
  const said = [errors > 0 ? words(errors, 'error') : '', warnings > 0 ? words(warnings, 'warning') : ''].filter(Boolean);
  return said.length > 0 ? said.join(' and ') : 'no problems';
}

/** One problem per distinct severity, path and message, in the order first found. */
export function distinct(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = JSON.stringify([problem.severity, problem.path ?? null, problem.message, problem.env ?? null]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The file as the operator names it: relative to the working directory when it is inside it. */
export function displayName(file: string, cwd: string = process.cwd()): string {
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/**
 * Keys whose values are secrets: never shown in a quoted line. `url` is a database's or Redis's,
 * which may carry a password (masked when it has credentials, `@`); everything under `privateKey` is
 * a private JWK.
 */
const SECRET_KEY = /(secret|password|passwd|token|cookiekey|privatekey)$|^key$/i;
const CREDENTIALS_KEY = /^url$/i;
/** `scheme://user:password@`: the password (group 2) of credentials written in a URL. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)([^\s/@]+)@/gi;
/**
 * `clientSecret: value` written on a line (block or flow style, quoted or not, even unclosed): the
 * value (group 2). A second net under the document's structure, which a syntax error leaves unsure.
 */
const WRITTEN_SECRET =
  /(?:^|[\s{,[])["']?((?:[A-Za-z0-9_-]*(?:secret|password|passwd|token|cookiekey|privatekey))|key)["']?[ \t]*:[ \t]+("[^"\n]*"?|'[^'\n]*'?|(?:\$\{[^}\n]*\}|\$(?!\{)|[^\s,}\]#$])(?:(?:\$\{[^}\n]*\}|\$(?!\{)|[^,}\]#\n$])*(?:\$\{[^}\n]*\}|\$(?!\{)|[^\s,}\]#$]))?)/dgim;
/** A value that is only a reference to the environment, e.g. `${CORP_CLIENT_SECRET}`: shown as written. */
const ONLY_REFERENCE = /^\s*["']?\$\{[A-Za-z_][A-Za-z0-9_]*\}["']?\s*$/;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** How a syntax error of the YAML library reads without its own excerpt (which ends in a dangling colon). */
function syntaxMessage(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}

/** Errors of the YAML library after which the document still reads as written (the rest can be checked). */
const RECOVERABLE_YAML_ERRORS = new Set(['DUPLICATE_KEY']);

/** A configuration file read as YAML, with where each key is in it. */
export class ConfigSource {
  private readonly document: Document;
  private readonly lines = new LineCounter();
  /** Ranges of the file (start, end offsets) that are secret values. */
  private readonly secrets: Array<[number, number]> = [];
  /** The YAML's own problems (syntax errors, duplicate keys, its warnings), with their positions. */
  readonly problems: ConfigProblem[];
  /** Whether the document can be read further: no syntax error makes what follows it uncertain. */
  readonly readable: boolean;

  constructor(
    private readonly text: string,
    /** The file as the operator names it (`gatehouse.yaml`). */
    readonly name: string,
  ) {
    this.document = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter: this.lines });
    this.readable = this.document.errors.every((error) => RECOVERABLE_YAML_ERRORS.has(error.code));
    // Written secrets first (by the document's structure, and by the text for a file that does not
    // parse), so that no quoted line shows one, a syntax error's included.
    for (const match of text.matchAll(WRITTEN_SECRET)) {
      const [start, end] = match.indices![2]!;
      if (!ONLY_REFERENCE.test(match[2]!)) this.secrets.push([start, end]);
    }
    visit(this.document, {
      Pair: (_key, pair) => {
        const name = isScalar(pair.key) ? String(pair.key.value) : '';
        if (isSecretKey(name)) this.maskValue(pair, false);
        else if (CREDENTIALS_KEY.test(name)) this.maskValue(pair, true);
      },
      // A password in any URL (an upstream's, say): the password, not the whole value.
      Scalar: (_key, scalar) => {
        if (!scalar.range) return;
        const written = this.text.slice(scalar.range[0], scalar.range[1]);
        for (const match of written.matchAll(URL_PASSWORD)) {
          const start = scalar.range[0] + match.index + match[1]!.length;
          this.secrets.push([start, start + match[2]!.length]);
        }
      },
    });
    const fromYaml = (severity: ConfigProblem['severity']) => (error: { message: string; pos: [number, number] }) => ({
      severity,
      message: syntaxMessage(error.message),
      at: this.spot(error.pos[0], Math.max(1, error.pos[1] - error.pos[0])),
    });
    this.problems = distinct([...this.document.errors.map(fromYaml('error')), ...this.document.warnings.map(fromYaml('warning'))]);
  }

  /** The document as plain data (what the schema reads); `{}` for an empty file. */
  data(): unknown {
    return this.document.toJS({ maxAliasCount: 100 }) ?? {};
  }

  /** Treats the value at `path` as a secret from now on (an unknown key that looks like a secret one). */
  maskAt(configPath: ConfigPath): void {
    const { pair, rest } = this.find(configPath);
    if (pair && rest.length === 0) this.maskValue(pair, false);
  }

  /**
   * Where a key's problem is: on its value (`focus: 'value'`, a bad value) or its key (an unknown key);
   * `reference` puts it on a `${NAME}` inside the value. A key the file does not have (a required one
   * missing) is placed at the nearest enclosing key or list item the file has; none (the root): no spot.
   */
  locate(configPath: ConfigPath, { focus = 'value', reference }: { focus?: 'key' | 'value'; reference?: string } = {}): SourceSpot | undefined {
    const { node, pair, rest } = this.find(configPath);
    const found = rest.length === 0;
    const key = pair && isScalar(pair.key) ? pair.key : undefined;
    const value = found && isNode(node) && !(isScalar(node) && node.value === null) ? node : undefined;
    if (found && reference && value?.range) {
      const start = this.text.slice(value.range[0], value.range[1]).indexOf(`\${${reference}`);
      if (start >= 0) {
        const offset = value.range[0] + start;
        const end = this.text.indexOf('}', offset);
        return this.spot(offset, end > offset ? end - offset + 1 : reference.length + 2);
      }
    }
    const target = focus === 'value' && value ? value : (key ?? (isNode(node) && node !== this.document.contents ? node : undefined));
    if (!target?.range) return undefined;
    // A collection is underlined at its first character only; a scalar whole (on its line).
    return this.spot(target.range[0], isCollection(target) ? 1 : target.range[1] - target.range[0]);
  }

  /** The index of the first item of the list at `listPath` whose `key` is `value` (a provider by id), or -1. */
  indexWhere(listPath: ConfigPath, key: string, value: unknown): number {
    const { node, rest } = this.find(listPath);
    if (rest.length > 0 || !isSeq(node)) return -1;
    return node.items.findIndex((item) => isMap(item) && item.items.some((entry) => isScalar(entry.key) && entry.key.value === key && isScalar(entry.value) && entry.value.value === value));
  }

  /** Whether the item at `itemPath` has `key` written in the file. */
  has(itemPath: ConfigPath): boolean {
    return this.find(itemPath).rest.length === 0;
  }

  /** The node at a path, or the deepest one the file has on the way to it, and what is left of the path. */
  private find(configPath: ConfigPath): { node: unknown; pair: Pair | undefined; rest: ConfigPath } {
    let node: unknown = this.document.contents;
    let pair: Pair | undefined;
    for (const [index, segment] of configPath.entries()) {
      if (isAlias(node)) node = node.resolve(this.document);
      if (isMap(node)) {
        const entry = node.items.find((item): item is Pair => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment));
        if (!entry) return { node, pair, rest: configPath.slice(index) };
        pair = entry;
        node = entry.value;
      } else if (isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
        pair = undefined;
        node = node.items[segment];
      } else return { node, pair, rest: configPath.slice(index) };
    }
    return { node, pair, rest: [] };
  }

  private maskValue(pair: Pair, onlyWithCredentials: boolean): void {
    const scalars: Array<[number, number]> = [];
    const collect = (node: unknown) => {
      if (isScalar(node) && node.range) scalars.push([node.range[0], node.range[1]]);
      else if (isCollection(node)) for (const item of node.items) collect(isPair(item) ? item.value : item);
    };
    collect(pair.value);
    for (const [start, end] of scalars) {
      const written = this.text.slice(start, end);
      if (ONLY_REFERENCE.test(written)) continue;
      if (onlyWithCredentials && !written.includes('@')) continue;
      this.secrets.push([start, end]);
    }
  }

  /** The spot at an offset of the file: its line, column, the line as written with secrets masked. */
  private spot(offset: number, length: number): SourceSpot {
    const { line, col } = this.lines.linePos(offset);
    const start = this.lines.lineStarts[line - 1] ?? 0;
    const next = this.lines.lineStarts[line] ?? this.text.length;
    const end = this.text[next - 1] === '\n' ? (this.text[next - 2] === '\r' ? next - 2 : next - 1) : next;
    let text = '';
    let caret = 0;
    let width = Math.max(1, Math.min(length, end - offset));
    for (let at = start; at < end; ) {
      const secret = this.secrets.find(([from, to]) => from <= at && at < to);
      if (!secret) {
        if (at === offset) caret = text.length + 1;
        text += this.text[at];
        at++;
        continue;
      }
      const to = Math.min(secret[1], end);
      const masked = '***';
      if (offset >= at && offset < to) {
        caret = text.length + 1;
        width = masked.length;
      }
      text += masked;
      at = to;
    }
    // At the end of its line (a missing character at a line break): right after what is written.
    if (caret === 0) caret = text.length + 1;
    width = Math.max(1, Math.min(width, text.length - caret + 1));
    return { line, column: col, text: text.replace(/\s+$/, ''), caret, width };
  }
}

function isNode(value: unknown): value is Node {
  return isScalar(value) || isCollection(value) || isAlias(value);
}

/**
 * The keys an object of `schema` accepts at `at` in `data` (what zod read): for "did you mean". Follows
 * the schema the way zod does — optional, default and pipe wrappers, a preprocess applied to the data,
 * a discriminated union's option picked by its discriminator, a union's object option, list items.
 */
export function knownKeysAt(schema: z.ZodType, data: unknown, at: ConfigPath): string[] {
  let [current, value] = unwrap(schema, data);
  for (const segment of at) {
    const def = defOf(current);
    const next =
      def.type === 'object' ? def.shape?.[String(segment)] : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
    if (!next) return [];
    [current, value] = unwrap(next, isRecord(value) || Array.isArray(value) ? (value as Record<string, unknown>)[segment as string] : undefined);
  }
  const def = defOf(current);
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** What zod 4 keeps of a schema's definition that the walk reads. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  values?: unknown[];
  getter?: () => z.ZodType;
  transform?: (value: unknown, context: unknown) => unknown;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { def: Def }).def;

function unwrap(schema: z.ZodType, data: unknown, depth = 0): [z.ZodType, unknown] {
  const def = defOf(schema);
  if (depth > 32) return [schema, data];
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return def.innerType ? unwrap(def.innerType, data, depth + 1) : [schema, data];
    case 'lazy':
      return def.getter ? unwrap(def.getter(), data, depth + 1) : [schema, data];
    case 'pipe': {
      // A preprocess (a transform before the schema) changes what the schema reads: apply it.
      const inner = def.in && defOf(def.in);
      if (inner?.type === 'transform' && def.out) return unwrap(def.out, applyTransform(inner, data), depth + 1);
      return def.in ? unwrap(def.in, data, depth + 1) : [schema, data];
    }
    case 'union': {
      const options = (def.options ?? []).map((option) => unwrap(option, data, depth + 1));
      if (def.discriminator && isRecord(data)) {
        const chosen = options.find(([option]) => {
          const literal = defOf(option).shape?.[def.discriminator!];
          return literal !== undefined && (defOf(literal).values ?? []).includes(data[def.discriminator!]);
        });
        if (chosen) return chosen;
      }
      return options.find(([option]) => defOf(option).type === 'object') ?? [schema, data];
    }
    default:
      return [schema, data];
  }
}

function applyTransform(def: Def, data: unknown): unknown {
  try {
    return def.transform?.(data, { value: data, issues: [], addIssue: () => {} }) ?? data;
  } catch {
    return data;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The known key an unknown one was probably meant to be: the same but for case, else the closest by
 * Levenshtein distance within about 40 % of its length (TypeScript's rule for its own suggestions), so
 * that `trustedProxy` suggests `trustedProxies` and `x` suggests nothing.
 */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase();
  const sameButCase = known.find((key) => key.toLowerCase() === lower);
  if (sameButCase) return sameButCase;
  const maxDistance = Math.floor(unknown.length * 0.4);
  if (maxDistance === 0) return undefined;
  const match = closestMatch(lower, known.map((key) => key.toLowerCase()), { maxDistance });
  return match === undefined ? undefined : known.find((key) => key.toLowerCase() === match);
}

/** A problem as found, before it is placed in the file. */
export interface FoundProblem {
  severity?: ConfigProblem['severity'];
  path?: ConfigPath | undefined;
  message: string;
  /** Where in the key to point: its value (default) or the key itself (an unknown key). */
  focus?: 'key' | 'value';
  /** The `${NAME}` reference inside the value to point at. */
  reference?: string;
  env?: string | undefined;
  /** Already placed (the YAML library's own problems). */
  at?: SourceSpot | undefined;
  /** The value is to be masked wherever it is quoted (an unknown key that may be a secret one). */
  secret?: boolean;
}

/**
 * The problems placed in the file (when there is one), each once, in the order of the file (those
 * without a place last, in the order found).
 */
export function placeProblems(found: readonly FoundProblem[], located: ConfigSource | undefined): ConfigProblem[] {
  if (located) for (const problem of found) if (problem.secret && problem.path) located.maskAt(problem.path);
  const placed = found.map(
    (problem): ConfigProblem => ({
      severity: problem.severity ?? 'error',
      path: problem.path,
      message: problem.message,
      at: problem.at ?? (problem.path && !problem.env ? located?.locate(problem.path, { focus: problem.focus, reference: problem.reference }) : undefined),
      env: problem.env,
    }),
  );
  const order = (problem: ConfigProblem) => (problem.at ? problem.at.line * 1e6 + problem.at.column : Number.MAX_SAFE_INTEGER);
  return distinct(placed)
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => order(a.problem) - order(b.problem) || a.index - b.index)
    .map(({ problem }) => problem);
}

/**
 * zod's issues as problems: an unknown key is one problem per key, at the key, with the known key it
 * was probably meant to be; a key left out that must be given "is required" (not "expected string,
 * received undefined").
 */
export function schemaProblems(issues: readonly z.core.$ZodIssue[], schema: z.ZodType, input: unknown): FoundProblem[] {
  const found = issues.flatMap((issue): Array<FoundProblem & { meant?: ConfigPath }> => {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, input, issue.path as ConfigPath);
      return issue.keys.map((key) => {
        const suggestion = suggestKey(key, known);
        return {
          path: [...(issue.path as ConfigPath), key],
          message: `unknown key${suggestion ? ` (did you mean ${suggestion}?)` : ''}`,
          focus: 'key',
          secret: isSecretKey(key) || (suggestion !== undefined && isSecretKey(suggestion)),
          ...(suggestion ? { meant: [...(issue.path as ConfigPath), suggestion] } : {}),
        };
      });
    }
    const at = issue.path as ConfigPath;
    if (issue.code === 'invalid_type' && at.length > 0 && valueAt(input, at) === undefined) return [{ path: at, message: 'is required' }];
    return [{ path: at, message: issue.message }];
  });
  // A required key written with a typo is one problem, the typo ("isuer: … did you mean issuer?"), not two.
  const meant = found.flatMap((problem) => (problem.meant ? [JSON.stringify(problem.meant)] : []));
  return found
    .filter((problem) => !(problem.message.startsWith('is required') && meant.includes(JSON.stringify(problem.path))))
    .map(({ meant: _meant, ...problem }) => problem);
}

function valueAt(data: unknown, at: ConfigPath): unknown {
  let value = data;
  for (const segment of at) {
    if (!isRecord(value) && !Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[segment as string];
  }
  return value;
}
