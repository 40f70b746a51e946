/**
 * scripts/lazy-index.js rewrites the lib/index.js that jsii writes so that the public modules a
 * plain synthesis does not use load when one of their exports is first read (issue 50). Checked
 * on what TypeScript emits for src/index.ts with the project's options, evaluated with a stand-in
 * `require` that records what is loaded: the same exports with the same values, the lazy modules
 * loaded only when read, once.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LAZY, lazyIndex } = require('../scripts/lazy-index') as { LAZY: string[]; lazyIndex: (js: string, lazy?: string[]) => string };

const ROOT = path.join(__dirname, '..');
const tsconfig = ts.parseJsonConfigFileContent(ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT);
const emitted = ts.transpileModule(fs.readFileSync(path.join(ROOT, 'src', 'index.ts'), 'utf8'), {
  compilerOptions: { ...tsconfig.options, sourceMap: false },
  fileName: path.join(ROOT, 'src', 'index.ts'),
}).outputText;

/** Evaluates an index.js text: its exports object and the modules it required, in order. */
function evaluate(js: string) {
  const loaded: string[] = [];
  const fakeRequire = (mod: string) => {
    loaded.push(mod);
    // every export of a module is a value that names it
    return new Proxy({}, { get: (_, name) => (typeof name === 'string' ? `${mod}#${name}` : undefined), ownKeys: () => [] });
  };
  const exports: Record<string, unknown> = {};
  new Function('exports', 'require', js)(exports, fakeRequire);
  return { exports, loaded };
}

test('the lazy modules are required only when one of their exports is read, once; the exports and values are those of the eager index', () => {
  const eager = evaluate(emitted);
  const lazy = evaluate(lazyIndex(emitted));
  expect(eager.loaded).toEqual(expect.arrayContaining(LAZY));
  expect(lazy.loaded).toEqual(eager.loaded.filter(m => !LAZY.includes(m)));

  expect(Object.keys(lazy.exports).sort()).toEqual(Object.keys(eager.exports).sort());
  for (const name of Object.keys(eager.exports)) expect([name, lazy.exports[name]]).toEqual([name, eager.exports[name]]);
  expect(lazy.exports.SidecarTimeline).toBe('./timeline#SidecarTimeline');
  expect(lazy.loaded.filter(m => m === './timeline')).toEqual(['./timeline']);
  expect(lazy.loaded.slice(-LAZY.length).sort()).toEqual([...LAZY].sort());
});

test('the lines stay where they were (index.js.map still maps them), and a second pass changes nothing', () => {
  const once = lazyIndex(emitted);
  expect(once.split('\n').length).toBe(emitted.split('\n').length);
  expect(() => lazyIndex(once)).toThrow(/no `var x = require\("\.\/validation"\);` line/);
});

test('an index of another shape fails the build instead of staying eager', () => {
  expect(() => lazyIndex(emitted.replace('var timeline_1 = require("./timeline");', 'const timeline_1 = require("./timeline");')))
    .toThrow(/no `var x = require\("\.\/timeline"\);` line/);
  expect(() => lazyIndex(`${emitted}\nconsole.log(timeline_1.SidecarTimeline);\n`)).toThrow(/timeline_1 \(\.\/timeline\) is used \d+ times, \d+ of them in export getters: only getters may use it/);
});
