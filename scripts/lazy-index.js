/**
 * Runs after jsii in the compile task: rewrites lib/index.js so that the public modules a plain
 * synthesis does not use are loaded when one of their exports is first read, not when the library
 * is (issue 50: the import's share). TypeScript compiles each `export { X } from './m'` of
 * src/index.ts to `var m_1 = require("./m");` and a getter `return m_1.X;`: the getter stays, the
 * require moves into it. The exports, their names and their values do not change.
 *
 * Fails (exit 1) when lib/index.js has not the expected shape for one of LAZY, rather than leave
 * it eager unnoticed. test/lazy-index.test.ts checks the rewrite on what TypeScript emits.
 *
 *   node scripts/lazy-index.js [lib/index.js]
 */
const fs = require('fs');
const path = require('path');

/**
 * What a synthesis with WithLogAgent, WithTracer and WithEnvoy (and Sidecars, LogAgent, LogOutput)
 * never touches: the other constructs, the timeline, the validation plugin of the cdk8s CLI.
 */
const LAZY = [
  './validation',
  './with-sidecar',
  './adopt-sidecar',
  './with-mesh',
  './guard',
  './sidecar-injection-policy',
  './timeline',
  './validation-plugin',
];

/** The text of index.js with the modules of `lazy` loaded on first use; throws when its shape is not the expected one. */
function lazyIndex(js, lazy = LAZY) {
  let out = js;
  for (const mod of lazy) {
    const decl = new RegExp(`^var (\\w+) = require\\("${mod.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"\\);$`, 'm').exec(out);
    if (!decl) throw new Error(`lazy-index: no \`var x = require("${mod}");\` line in index.js`);
    const v = decl[1];
    const getter = new RegExp(`return ${v}\\.(\\w+); \\}`, 'g');
    const uses = out.split(v).length - 1;
    const getters = [...out.matchAll(getter)].length;
    if (getters === 0 || uses !== getters + 1) {
      throw new Error(`lazy-index: ${v} (${mod}) is used ${uses - 1} times, ${getters} of them in export getters: only getters may use it`);
    }
    // one line for one: the lines of index.js.map still match
    out = out.replace(decl[0], `let ${v}_; const ${v} = () => (${v}_ ??= require("${mod}"));`).replace(getter, `return ${v}().$1; }`);
  }
  return out;
}

module.exports = { LAZY, lazyIndex };

if (require.main === module) {
  const file = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'lib', 'index.js'));
  const js = fs.readFileSync(file, 'utf8');
  if (/^let \w+_; const /m.test(js)) {
    console.log(`lazy-index: ${path.relative(process.cwd(), file)} already rewritten`);
  } else {
    try {
      fs.writeFileSync(file, lazyIndex(js));
    } catch (e) {
      console.error(e.message);
      process.exit(1);
    }
    console.log(`lazy-index: ${LAZY.length} modules of ${path.relative(process.cwd(), file)} load on first use`);
  }
}
