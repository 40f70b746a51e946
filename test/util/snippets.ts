/**
 * The TypeScript snippets of the documentation, as users read them: every ```ts (or
 * ```typescript) block of README.md, CONTRIBUTING.md and docs/*.md, and every `@example` of the
 * TSDoc in src/ (what API.md shows). `scripts/check-snippets.ts` (part of `npm test`) type-checks
 * them against the library; `test/docs-examples.test.ts` runs the ones that build an app.
 *
 * A block whose info string says `nocompile` (```ts nocompile) is a fragment that is not meant to
 * compile, and is skipped: keep those few. Every other snippet is compiled as a module of its own,
 * strict, against the library's source (`'cdk8s-sidecars'` resolves to src/index.ts):
 * - names it uses but does not import or declare come from one prelude: `cdk8s`'s `App`, `Chart`,
 *   `Duration`, ..., `kplus` (cdk8s-plus-34) and every export of src/index.ts;
 * - the objects a fragment refers to without creating them (`app`, `chart`, `web`, `job`, ...)
 *   are declared in `FIXTURE` below (with values in `fixtureValues()` for the runs). A snippet
 *   that creates its own shadows them.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

export const ROOT = path.join(__dirname, '..', '..');

export interface Snippet {
  /** Path relative to the repository root, and the 1-based line of the snippet's first code line. */
  readonly file: string;
  readonly line: number;
  readonly code: string;
  /** The fence's info string after the language (e.g. `nocompile`). */
  readonly info: string;
}

/** The Markdown files whose snippets are compiled. */
export function markdownFiles(root = ROOT): string[] {
  const docs = path.join(root, 'docs');
  const inDocs = fs.existsSync(docs) ? fs.readdirSync(docs).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`) : [];
  return ['README.md', 'CONTRIBUTING.md', ...inDocs].filter(f => fs.existsSync(path.join(root, f)));
}

/** ```ts / ```typescript blocks of one Markdown text (indented fences too, e.g. in a list). */
export function markdownSnippets(file: string, text: string): Snippet[] {
  const out: Snippet[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(ts|typescript)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, , info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[j]); j++) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: unterminated code block`);
    out.push({ file, line: i + 2, code: body.join('\n'), info: info.trim() });
    i = j;
  }
  return out;
}

/** The `@example` blocks of the TSDoc comments in src/ (jsii-docgen puts them into API.md). */
export function tsdocSnippets(root = ROOT): Snippet[] {
  const out: Snippet[] = [];
  const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
    .flatMap(e => e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
  for (const abs of walk(path.join(root, 'src')).sort()) {
    const file = path.relative(root, abs).split(path.sep).join('/');
    const text = fs.readFileSync(abs, 'utf8');
    for (const m of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const startLine = text.slice(0, m.index).split('\n').length;
      const lines = m[0].split('\n').map(l => l.replace(/^\s*\/?\*+\/?\s?/, '').replace(/\s*\*\/$/, ''));
      for (let i = 0; i < lines.length; i++) {
        if (!/^@example\b/.test(lines[i])) continue;
        const body: string[] = [];
        const inline = lines[i].replace(/^@example\s*/, '');
        if (inline) body.push(inline);
        let j = i + 1;
        for (; j < lines.length && !/^@\w/.test(lines[j]); j++) body.push(lines[j]);
        const code = body.join('\n').replace(/^```\w*\n?|\n?```\s*$/g, '').trim();
        out.push({ file, line: startLine + i + (inline ? 0 : 1), code, info: '' });
        i = j - 1;
      }
    }
  }
  return out;
}

/** Every snippet of the documentation, `nocompile` ones included. */
export function allSnippets(root = ROOT): Snippet[] {
  return [
    ...markdownFiles(root).flatMap(f => markdownSnippets(f, fs.readFileSync(path.join(root, f), 'utf8'))),
    ...tsdocSnippets(root),
  ];
}

export const isCompiled = (s: Snippet) => !/\bnocompile\b/.test(s.info);

/**
 * The objects fragments refer to, declared for the type-check (a global script: a snippet's own
 * top-level declaration of the same name shadows it).
 */
export const FIXTURE = `
declare const app: import('cdk8s').App;
declare const chart: import('cdk8s').Chart;
declare const platformChart: import('cdk8s').Chart;
declare const web: import('cdk8s-plus-34').Deployment;
declare const deployment: import('cdk8s-plus-34').Deployment;
declare const checkout: import('cdk8s-plus-34').Deployment;
declare const job: import('cdk8s-plus-34').Job;
declare const manifest: Record<string, unknown>;
declare const ShopChart: typeof import('cdk8s').Chart;
`;

/** The names `FIXTURE` declares (and `fixtureValues` provides). */
export const FIXTURE_NAMES = [...FIXTURE.matchAll(/declare const (\w+)/g)].map(m => m[1]);

const CDK8S_NAMES = ['ApiObject', 'App', 'Chart', 'Cron', 'Duration', 'Include', 'Size', 'Testing'];

/** The names src/index.ts exports. */
export function libraryExports(root = ROOT): string[] {
  const index = path.join(root, 'src', 'index.ts');
  const sf = ts.createSourceFile(index, fs.readFileSync(index, 'utf8'), ts.ScriptTarget.ES2022, true);
  const names: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isExportDeclaration(st)) continue;
    if (st.exportClause && ts.isNamedExports(st.exportClause)) {
      names.push(...st.exportClause.elements.map(e => e.name.text));
    } else if (st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      // `export * from './x'`: the declarations x exports
      const text = fs.readFileSync(path.join(root, 'src', `${st.moduleSpecifier.text}.ts`), 'utf8');
      names.push(...[...text.matchAll(/^export (?:declare )?(?:abstract )?(?:class|interface|enum|const|function|type) (\w+)/gm)].map(m => m[1]));
    }
  }
  return [...new Set(names)];
}

/** Names a snippet binds at its top level (imports and declarations). */
function ownNames(code: string): Set<string> {
  const sf = ts.createSourceFile('s.ts', code, ts.ScriptTarget.ES2022, true);
  const names = new Set<string>();
  const bind = (n: ts.BindingName) => {
    if (ts.isIdentifier(n)) names.add(n.text);
    else for (const e of n.elements) if (!ts.isOmittedExpression(e)) bind(e.name);
  };
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && st.importClause) {
      if (st.importClause.name) names.add(st.importClause.name.text);
      const nb = st.importClause.namedBindings;
      if (nb && ts.isNamespaceImport(nb)) names.add(nb.name.text);
      if (nb && ts.isNamedImports(nb)) for (const e of nb.elements) names.add(e.name.text);
    } else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) bind(d.name);
    } else if ((ts.isClassDeclaration(st) || ts.isFunctionDeclaration(st) || ts.isEnumDeclaration(st)
      || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) && st.name) {
      names.add(st.name.text);
    }
  }
  return names;
}

/**
 * The snippet as a module: one prelude line that imports what the snippet uses without importing
 * it (so the snippet's line N is the module's line N + 1), the snippet, `export {}`.
 */
export function asModule(code: string, library = libraryExports()): string {
  const own = ownNames(code);
  const pick = (names: string[]) => names.filter(n => !own.has(n));
  const prelude = [
    `import { ${pick(CDK8S_NAMES).join(', ')} } from 'cdk8s';`,
    own.has('kplus') ? '' : "import * as kplus from 'cdk8s-plus-34';",
    pick(library).length ? `import { ${pick(library).join(', ')} } from 'cdk8s-sidecars';` : '',
  ].join(' ');
  return `${prelude}\n${code}\nexport {};\n`;
}

export interface SnippetDiagnostic {
  readonly snippet: Snippet;
  readonly message: string;
}

/**
 * Type-checks every compiled snippet in one program (strict, as a cdk8s app's tsconfig is,
 * without the unused-name checks a fragment cannot meet). Returns one entry per error.
 */
export function compileSnippets(snippets: Snippet[], root = ROOT): SnippetDiagnostic[] {
  const dir = path.join(root, '.snippets');
  const names = libraryExports(root);
  const virtual = new Map<string, { text: string; snippet?: Snippet }>();
  virtual.set(path.join(dir, 'fixture.d.ts'), { text: FIXTURE });
  snippets.filter(isCompiled).forEach((s, i) => {
    virtual.set(path.join(dir, `s${i}-${s.file.replace(/[^A-Za-z0-9]/g, '_')}-${s.line}.ts`), { text: asModule(s.code, names), snippet: s });
  });
  const options: ts.CompilerOptions = {
    strict: true,
    noImplicitReturns: true,
    noFallthroughCasesInSwitch: true,
    esModuleInterop: true,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    paths: { 'cdk8s-sidecars': [path.join(root, 'src', 'index.ts')] },
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    const v = virtual.get(path.resolve(name));
    return v ? ts.createSourceFile(name, v.text, lang, true) : getSourceFile(name, lang, ...rest);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = name => virtual.has(path.resolve(name)) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = name => virtual.get(path.resolve(name))?.text ?? readFile(name);
  const program = ts.createProgram([...virtual.keys()], options, host);
  const out: SnippetDiagnostic[] = [];
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const v = d.file ? virtual.get(path.resolve(d.file.fileName)) : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (v?.snippet && d.file && d.start !== undefined) {
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      const s = v.snippet;
      out.push({ snippet: s, message: `${s.file}:${s.line + line - 1}:${character + 1}: ${text}` });
    } else {
      // an error outside the snippets (the fixture, the library): report it against the first
      out.push({ snippet: snippets[0], message: `${d.file ? path.relative(root, d.file.fileName) : '(options)'}: ${text}` });
    }
  }
  return out;
}
