/**
 * The hostile-file corpus of issue 38, generated (nothing of it is committed): YAML 1.1 scalars
 * that JavaScript readers read otherwise, encodings, directives, tags, bombs, deep nesting, many
 * documents, type confusions at every node of a workload, odd names. Each entry is the bytes of
 * one file; test/hostile.test.ts reads each with the command's reader and with the API server's
 * (test/go-yaml-reader) and runs `check` (and `render` where the file is a chart) on it.
 */

export interface CorpusFile {
  /** A name for reports (unique). */
  readonly name: string;
  readonly bytes: Buffer;
  /** Why the command may refuse what the API server reads (a stricter rule, docs/cli.md). */
  readonly stricter?: string;
  /**
   * kubectl's reading where it is not the YAML reader's: an input that starts with `{` is read
   * with Go's JSON decoder (apimachinery pkg/util/yaml/decoder.go NewYAMLOrJSONDecoder), which
   * takes escapes yaml.v2 refuses. Each run by hand with apimachinery v0.37.2 and v0.29.6.
   */
  readonly kubectl?: unknown[];
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** Scalars yaml.v2 reads differently from YAML 1.2 or from cdk8s' YAML 1.1 schema. */
export const ODD_SCALARS: string[] = [
  '12:30', '1:20', '190:20:30', '-1:30', '0o17', '0O17', '017', '0755', '08', '09', '019', '0x1F', '0X1f', '0x_1F', '0b101', '-0b101', '+0b1', '0b102',
  '1_000', '1__0', '_1', '+_1', '1_000.5', '.5_5', '._5', '1.', '1.e5', '.5', '+.5', '-.5e-3', '1e10', '1E+2', '1e400', '-1e400', '1e-400',
  '.nan', '.NaN', '.inf', '-.inf', '+.INF', '.iNf', 'nan', 'inf', 'Infinity',
  'y', 'Y', 'n', 'N', 'yes', 'Yes', 'YES', 'yEs', 'no', 'on', 'On', 'off', 'OFF', 'true', 'True', 'TRUE', 'tRue', 'false', '~', 'null', 'Null', 'NULL', 'nUll',
  '2024-01-02', '2024-1-2', '2024-01-02T10:00:00Z', '2024-01-02 10:00:00', '2024-01-02t10:00:00.5+01:00', '2001-12-14 21:59:43.10 -5', '1999-99-99',
  '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807', '9223372036854775808', '-9223372036854775808',
  '-9223372036854775809', '18446744073709551615', '18446744073709551616', '123456789012345678901234567890', '0x8000000000000000', '0xFFFFFFFFFFFFFFFF', '0x1FFFFFFFFFFFFFFFF',
  '-0', '-0.0', '+0', '0.0', '1.0', '0.1', '1.5e300', '4.9e-324', '2.5e-324', '1.7976931348623157e308', '1.7976931348623159e308',
  '-', '+', '.', '..', '0x', '0o', '0b', '00', '0.', '+0x10', '-0o17', '1.2.3', '1.30', '1.29.3', 'v1.29',
];

/** Strings that must come back as the same string (quoting needed on the way out). */
export const ODD_STRINGS: string[] = [
  '0o17', '12:30', '1:20', 'yes', 'y', 'n', 'on', 'null', '~', '', ' ', ' lead', 'trail ', '- x', '? x', ': x', 'a: b', 'a #b', '#x', '&x', '*x', '!x', '%x', '@x', '`x',
  '{a}', '[a]', '"q"', "'q'", '|', '>', 'a\nb', 'a\n', '\n', 'a\r\nb', 'tab\there', 'del\u007f', 'c1\u0080', 'nel\u0085', 'ls\u2028ls', 'ps\u2029ps', 'bom\ufeff',
  'nul\u0000', 'bell\u0007', 'esc\u001b[31m', 'nbsp\u00a0', 'é', '日本', '😀', 'a\\b', 'back\\', '\\n', '2024-01-02', '9007199254740993', '0x1F', '1_000', '.5', '1e3',
  'null\n', '---', '--- x', '...', 'x\n---\ny', 'a'.repeat(5000),
];

function deployment(name: string, extra: Record<string, string> = {}): string {
  return [
    'apiVersion: apps/v1', 'kind: Deployment', 'metadata:', `  name: ${name}`, '  namespace: shop', '  labels:', '    app: web',
    'spec:', '  replicas: 2', '  selector:', '    matchLabels:', '      app: web', '  template:', '    metadata:', '      labels:', '        app: web',
    '    spec:', '      containers:', '        - name: web', '          image: ghcr.io/example/web:1.0.0',
    '          ports:', '            - name: http', '              containerPort: 8080',
    ...Object.entries(extra).map(([k, v]) => `          ${k}: ${v}`),
    '',
  ].join('\n');
}

/** Every node of a workload replaced, one at a time, by a value of the wrong type. */
function typeConfusions(): CorpusFile[] {
  const base: any = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'w', namespace: 'shop', labels: { app: 'w' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'w' } },
      template: {
        metadata: { labels: { app: 'w' } },
        spec: {
          initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always', lifecycle: { preStop: { exec: { command: ['kill', '-TERM', '1'] } } }, startupProbe: { httpGet: { port: 9 } } }],
          containers: [{ name: 'app', image: 'app', ports: [{ name: 'http', containerPort: 8080 }], resources: { requests: { cpu: '1' } }, env: [{ name: 'A', value: 'b' }] }],
          volumes: [{ name: 'v', emptyDir: {} }],
        },
      },
    },
  };
  const paths: string[][] = [];
  const walk = (v: any, p: string[]) => {
    paths.push(p);
    if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) walk(v[k], [...p, k]);
  };
  walk(base, []);
  const wrong = ['5', '"x"', 'null', '[]', '{}', '[5]', '-1', 'true'];
  const out: CorpusFile[] = [];
  let n = 0;
  for (const p of paths.slice(1)) {
    for (const w of wrong) {
      if ((n++ % 3) !== 0) continue; // a third of them: the corpus stays quick
      const copy = JSON.parse(JSON.stringify(base));
      let at = copy;
      for (const k of p.slice(0, -1)) at = at[k];
      at[p[p.length - 1]] = JSON.parse(w);
      const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'shop' }, spec: { selector: { app: 'w' }, ports: [{ port: 80, targetPort: 'http' }] } };
      out.push({ name: `type ${p.join('.')}=${w}`, bytes: utf8(`${JSON.stringify(copy)}\n---\n${JSON.stringify(svc)}\n`) });
    }
  }
  // whole kinds of the wrong shape
  for (const kind of ['Deployment', 'Job', 'CronJob', 'Pod', 'List', 'HorizontalPodAutoscaler', 'Service', 'DeploymentList']) {
    for (const body of ['spec: 5', 'spec: [1]', 'spec: {template: 5}', 'spec: {jobTemplate: {spec: {template: {spec: 5}}}}', 'items: 5', 'items: [5, null, {kind: Deployment, spec: 5}]', 'metadata: 5', 'spec: {ports: 5}', 'spec: {containers: 5}']) {
      out.push({ name: `shape ${kind} ${body}`, bytes: utf8(`apiVersion: v1\nkind: ${kind}\nmetadata: {name: x}\n${body.startsWith('metadata') ? '' : body}\n`) });
    }
  }
  return out;
}

/** The corpus: at least 300 files. */
export function hostileCorpus(): CorpusFile[] {
  const files: CorpusFile[] = [];
  // 1. scalars: plain as a ConfigMap value and as an env value, and as keys
  ODD_SCALARS.forEach((s, i) => {
    files.push({ name: `scalar ${s}`, bytes: utf8(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s${i}}\ndata:\n  k: ${s}\n  l: [${s}]\n  m: {x: ${s}}\n`) });
    files.push({ name: `scalar key ${s}`, bytes: utf8(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k${i}}\ndata:\n  ${s}: v\n`) });
  });
  files.push({ name: 'env values', bytes: utf8(deployment('env', { env: `[${ODD_SCALARS.slice(0, 40).map((s, i) => `{name: V${i}, value: ${s}}`).join(', ')}]` })) });
  // 2. strings written quoted (must stay strings)
  ODD_STRINGS.forEach((s, i) => {
    const raw = /[\u0085\u2028\u2029]/.test(s);
    files.push({
      name: `string ${JSON.stringify(s).slice(0, 30)}`,
      bytes: utf8(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: q${i}}\ndata:\n  k: ${JSON.stringify(s)}\n`),
      ...(raw ? { stricter: 'line breaks JavaScript readers do not know are refused raw' } : {}),
    });
  });
  // 3. encodings and bytes
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: enc}\ndata: {k: v}\n';
  const le16 = Buffer.from(cm, 'utf16le');
  const be16 = Buffer.from(le16).swap16();
  files.push({ name: 'utf-16le bom', bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), le16]), stricter: 'UTF-8 only' });
  files.push({ name: 'utf-16be bom', bytes: Buffer.concat([Buffer.from([0xfe, 0xff]), be16]), stricter: 'UTF-8 only' });
  files.push({ name: 'utf-16le no bom', bytes: le16 });
  const u32 = Buffer.alloc(cm.length * 4);
  for (let i = 0; i < cm.length; i++) u32.writeUInt32LE(cm.charCodeAt(i), i * 4);
  files.push({ name: 'utf-32le bom', bytes: Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), u32]), stricter: 'UTF-8 only' });
  files.push({ name: 'utf-8 bom', bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(cm)]) });
  files.push({ name: 'bom mid', bytes: utf8(cm + '---\n\ufeffa: 1\n') });
  files.push({ name: 'latin-1', bytes: Buffer.concat([utf8('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: l}\ndata: {k: caf'), Buffer.from([0xe9]), utf8('}\n')]) });
  for (const bad of [[0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xff], [0x80]]) {
    files.push({ name: `invalid utf-8 ${Buffer.from(bad).toString('hex')}`, bytes: Buffer.concat([utf8('a: "x'), Buffer.from(bad), utf8('"\n')]) });
  }
  for (const c of [0x00, 0x01, 0x07, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f]) {
    files.push({ name: `control 0x${c.toString(16)} plain`, bytes: Buffer.concat([utf8('a: x'), Buffer.from([c]), utf8('y\n')]) });
    files.push({ name: `control 0x${c.toString(16)} comment`, bytes: Buffer.concat([utf8('a: 1 # x'), Buffer.from([c]), utf8('\n')]) });
  }
  for (const ch of ['\u0085', '\u2028', '\u2029', '\u0080', '\u009f', '\ufffe', '\uffff']) {
    const hex = ch.charCodeAt(0).toString(16);
    files.push({ name: `raw U+${hex} plain`, bytes: utf8(`a: x${ch}y\n`), stricter: 'line breaks JavaScript readers do not know are refused raw' });
    files.push({ name: `raw U+${hex} quoted`, bytes: utf8(`a: "x${ch}y"\n`), stricter: 'line breaks JavaScript readers do not know are refused raw' });
    files.push({ name: `raw U+${hex} comment`, bytes: utf8(`a: 1 # x${ch}y\n`), stricter: 'line breaks JavaScript readers do not know are refused raw' });
  }
  // 4. directives, separators, document ends
  for (const [n, t] of [
    ['%YAML', '%YAML 1.1\n---\na: 1\n'], ['%YAML 1.2', '%YAML 1.2\n---\na: 1\n'], ['%TAG', '%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n'],
    ['%FOO', '%FOO bar\n---\na: 1\n'], ['--- text', '--- a: 1\n'], ['--- |', '--- |\n  x\n'], ['---# c', '---# c\na: 1\n'], ['--- # c', '--- # c\na: 1\n'],
    ['---x', '---x\na: 1\n'], ['... end', 'a: 1\n...\n'], ['... then more', 'a: 1\n...\nb: 2\n'], ['--- in block', 'a: |\n  x\n---\n  y\n'],
    ['empty docs', '---\n---\n\n---\n# c\n---\na: 1\n'], ['only comments', '# a\n# b\n'], ['empty', ''], ['spaces', '   \n\n'],
  ] as Array<[string, string]>) {
    files.push({ name: `directive ${n}`, bytes: utf8(t), ...(n === '... then more' ? { stricter: 'text after ... is refused, not dropped' } : {}) });
  }
  // 5. tags
  for (const t of [
    'a: !!binary aGVsbG8=', 'a: !!binary /w==', 'a: !!binary "aGVs\\nbG8="', 'a: !!binary |\n  aGVs\n  bG8=', 'a: !!binary ???', 'a: !!str 5', 'a: !!int "12"', 'a: !!int 0x10',
    'a: !!int x', 'a: !!float 5', 'a: !!float "1e3"', 'a: !!bool yes', 'a: !!bool 1', 'a: !!null ""', 'a: !!null x', 'a: !foo bar', 'a: !foo {b: 1}', 'a: ! 5', 'a: !!map {b: 1}',
    'a: !!seq [1]', 'a: !!set {b}', 'a: !!omap [{b: 1}]', 'a: !<tag:yaml.org,2002:int> 5', 'a: !<tag:yaml.org,2002:str> 5', 'a: !!merge <<', '!!int 5', '!!str',
    'a: !!timestamp 2001-01-01', 'a: !!python/object:os.system x', 'a: !!js/function "f(){}"',
  ]) {
    files.push({ name: `tag ${t}`, bytes: utf8(t + '\n'), ...(t.includes('!!timestamp') ? { stricter: 'explicit !!timestamp refused' } : {}) });
  }
  // 6. aliases, merges, keys
  for (const t of [
    'a: &x 1\nb: *x', 'a: &x {c: 1}\nb: *x', 'a: *nope', 'a: &a [*a]', '- &a x\n- *a\n- &a y\n- *a', 'b: &x {c: 1}\n<<: *x\nd: 2',
    '<<: [{a: 1}, {a: 2, b: 3}]', 'a: 1\n<<: {a: 2}', '<<: {a: 2}\na: 1', '<<: 5', '<<: [5]', '"<<": {a: 1}', 'a: 1\na: 2', 'a: {b: 1, b: 2}', '1: a\n2: b',
    'true: a', 'y: a', '~: a', 'null: a', '? [a]\n: 1', '? {a: 1}\n: 1', '1.5: a', '1e10: a', '0.1: a', '.inf: a', '.nan: a', '18446744073709551615: a', '9223372036854775807: a',
    '__proto__: {polluted: 1}', 'constructor: {prototype: {x: 1}}', 'a: {__proto__: 5}',
  ]) {
    files.push({ name: `alias/key ${JSON.stringify(t).slice(0, 40)}`, bytes: utf8(t + '\n') });
  }
  // 7. bombs and bounds
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++) laughs.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
  files.push({ name: 'billion laughs', bytes: utf8(laughs.join('\n') + '\n') });
  files.push({ name: 'alias fan-out 2000', bytes: utf8('a: &a {x: 1, y: 2}\nb: [' + Array(2000).fill('*a').join(',') + ']\n') });
  for (const depth of [100, 499, 600, 900, 5000, 20000]) {
    files.push({ name: `deep flow ${depth}`, bytes: utf8('a: ' + '['.repeat(depth) + ']'.repeat(depth) + '\n'), ...(depth > 499 ? { stricter: 'nesting limit 500' } : {}) });
    files.push({ name: `deep flow map ${depth}`, bytes: utf8('a: ' + '{a: '.repeat(depth) + '1' + '}'.repeat(depth) + '\n'), ...(depth > 499 ? { stricter: 'nesting limit 500' } : {}) });
  }
  for (const depth of [100, 600, 3000]) {
    files.push({ name: `deep block ${depth}`, bytes: utf8(Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n'), ...(depth > 499 ? { stricter: 'nesting limit 500' } : {}) });
    files.push({ name: `deep seq ${depth}`, bytes: utf8('- '.repeat(depth) + 'x\n'), ...(depth > 499 ? { stricter: 'nesting limit 500' } : {}) });
  }
  files.push({ name: '12000 documents', bytes: utf8(Array.from({ length: 12000 }, (_, i) => `a: ${i}\n`).join('---\n')), stricter: 'limit of 10000 documents' });
  files.push({ name: 'document over 3 MiB', bytes: utf8('a: "' + 'x'.repeat(3 * 1024 * 1024 + 10) + '"\n'), stricter: 'limit of 3 MiB per document' });
  files.push({ name: 'long line 1 MiB', bytes: utf8('a: ' + 'x'.repeat(1024 * 1024) + '\n') });
  files.push({ name: '100k keys', bytes: utf8('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n' + Array.from({ length: 100_000 }, (_, i) => `  k${i}: v\n`).join('')) });
  files.push({ name: 'many spaces', bytes: utf8('a:' + ' '.repeat(500_000) + 'b\n') });
  files.push({ name: 'many quotes', bytes: utf8('a: "' + '\\"'.repeat(200_000) + '"\n') });
  files.push({ name: 'unclosed flow', bytes: utf8('a: [' + '1, '.repeat(100_000) + '\n') });
  files.push({ name: 'unclosed quote', bytes: utf8('a: "' + 'x '.repeat(100_000) + '\n') });
  files.push({ name: 'many colons', bytes: utf8('a: ' + ':a'.repeat(100_000) + '\n') });
  files.push({ name: 'hook 200k kill', bytes: utf8(deployment('hook1', { lifecycle: `{preStop: {exec: {command: [kill, "-${'a'.repeat(200_000)}!", "1"]}}}` })) });
  files.push({ name: 'hook 90k postStart', bytes: utf8(deployment('hook2', { lifecycle: `{postStart: {exec: {command: [sh, -c, "i=0; until ${' wget -q -T 1 x'.repeat(3000)}${' if [ $i -ge 5 ]; then exit 0; fi; x'.repeat(2000)} sleep 1; don"]}}}` })) });
  // 8. odd names
  for (const name of ['"a\\nKubernetes 1.30: 0 file(s), 0 object(s), 0 workload(s): 0 error(s), 0 warning(s)"', '"a\\rb"', '"\\e[2Jx"', '"a\\u2028b"', '"\\u202ertl"', '"a b"', '"-"', '"../../etc/passwd"', '"日本"', '5', 'null', '[a]']) {
    files.push({
      name: `odd name ${name}`,
      bytes: utf8(`apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}, namespace: ${name}}\nspec:\n  template:\n    spec:\n      initContainers: [{name: ${name}, image: x, restartPolicy: Always, startupProbe: {httpGet: {port: 1}}}]\n      containers: [{name: app, image: x}]\n`),
    });
  }
  files.push(...typeConfusions());
  files.push(...jsonDocuments());
  return files;
}

/**
 * JSON documents (issue 36: the reader takes them with JSON.parse where the reading is the same):
 * layouts, escapes and numbers where JSON and yaml.v2 could part, duplicate keys that hide what
 * JSON.parse drops. Cases where the command's reader and the API server's already part for JSON
 * text (a key and its colon on two lines, a tab before the document, a key over 1024 characters,
 * a lone CR) are not here: both read paths of the command give the YAML parser's reading there.
 */
function jsonDocuments(): CorpusFile[] {
  const out: CorpusFile[] = [];
  const workload = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'j', namespace: 'shop', labels: { app: 'j' }, annotations: { note: 'a "quoted" # text: with \\ and / and {[,]}' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'j' } },
      template: {
        metadata: { labels: { app: 'j' } },
        spec: {
          initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always', args: ['-c', 'x=1; echo "$x"'] }],
          containers: [{ name: 'app', image: 'app', ports: [{ name: 'http', containerPort: 8080 }], env: [{ name: 'E', value: '' }, { name: 'N', value: null }] }],
        },
      },
    },
  };
  out.push({ name: 'json compact', bytes: utf8(JSON.stringify(workload)) });
  out.push({ name: 'json indent 2', bytes: utf8(JSON.stringify(workload, null, 2) + '\n') });
  out.push({ name: 'json indent tab', bytes: utf8(JSON.stringify(workload, null, '\t') + '\n') });
  out.push({ name: 'json crlf', bytes: utf8(JSON.stringify(workload, null, 1).replace(/\n/g, '\r\n') + '\r\n') });
  out.push({ name: 'json blank lines first', bytes: utf8('\n\n   ' + JSON.stringify(workload) + '\n\n') });
  out.push({ name: 'json stream', bytes: utf8([workload, { ...workload, metadata: { name: 'k' } }, [1, { a: null }]].map(d => JSON.stringify(d, null, 2)).join('\n---\n') + '\n') });
  out.push({ name: 'json top-level list', bytes: utf8('[1, "x", true, null, {"a": []}]\n') });
  out.push({ name: 'json escapes', bytes: utf8('{"a": "\\" \\\\ \\b \\f \\n \\r \\t \\u00e9 \\u2028 \\u0085 \\u0000 \\u001b \\uFFFD \\ufeff", "\\u0041\\n": 1}\n') });
  out.push({ name: 'json escape \\/', bytes: utf8('{"a": "x\\/y"}\n'), kubectl: [{ a: 'x/y' }] });
  out.push({ name: 'json escape surrogate pair', bytes: utf8('{"a": "\\ud83d\\ude00"}\n'), kubectl: [{ a: '\u{1F600}' }] });
  out.push({ name: 'json escape lone surrogate', bytes: utf8('{"a": "\\uDC00"}\n'), kubectl: [{ a: '\uFFFD' }] });
  out.push({ name: 'json raw astral', bytes: utf8('{"a": "😀 日本 \u00a0"}\n') });
  out.push({ name: 'json duplicate keys', bytes: utf8('{"a": 1, "b": 2, "a": {"c": 3}}\n') });
  out.push({ name: 'json __proto__ key', bytes: utf8('{"__proto__": {"x": 1}, "b": {"__proto__": null}}\n') });
  out.push({ name: 'json duplicate key hides deep nesting', bytes: utf8('{"a": ' + '['.repeat(600) + ']'.repeat(600) + ', "a": 1}\n'), stricter: 'nesting limit 500' });
  out.push({ name: 'json duplicate key hides an escape', bytes: utf8('{"a": "x\\/y", "a": 1}\n'), kubectl: [{ a: 1 }] });
  out.push({ name: 'json deep 500', bytes: utf8('['.repeat(499) + '1' + ']'.repeat(499) + '\n') });
  const numbers = ['0', '-0', '-0.0', '0.1', '-1.5', '1e5', '1E+2', '1.5e300', '1e-400', '-1e-400', '1e400', '-1e400', '4.9e-324', '1.7976931348623157e308',
    '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807', '9223372036854775808',
    '18446744073709551615', '18446744073709551616', '100000000000000000000.5', '123456789012345678901234567890'];
  for (const n of numbers) out.push({ name: `json number ${n}`, bytes: utf8(`{"n": ${n}, "l": [${n}], "m": {"${n}": ${n}}}\n`) });
  return out;
}
