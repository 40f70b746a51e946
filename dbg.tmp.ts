import { hostileCorpus } from './test/util/hostile-corpus';
import { render } from './src/cli/render';
import { readRenderConfig } from './src/cli/render-config';
import { readYaml } from './src/cli/reader';
const CONFIG = readRenderConfig({ kubernetesVersion: '1.30', workloads: [{ select: { kind: 'Deployment', name: 'web' }, logAgent: { output: { loki: { host: 'loki.observability', port: 3100, tls: false } }, logDirectory: '/var/log/app' } }] });
const dep = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: x}]\n';
const files = hostileCorpus().filter(f => f.name.startsWith('scalar') || f.name.startsWith('string') || f.name.startsWith('tag') || f.name.startsWith('alias/key'));
let n = 0;
for (const f of files) {
  const text = f.bytes.toString('utf8');
  const input = /^apiVersion/.test(text) ? `${text}---\n${dep}` : `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  ${text.trimEnd().replace(/\n/g, '\n  ')}\n---\n${dep}`;
  try { const out = render(input, CONFIG, 's'); if ([250,251,253,254].includes(n)) console.log(n, f.name, JSON.stringify(input.slice(0, 200)), '\nOUT:', JSON.stringify(out.split('---')[0])); n++; } catch (e) { }
}
let t = Date.now();
readYaml('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n' + Array.from({ length: 100_000 }, (_, i) => `  k${i}: v\n`).join(''), 'x');
console.log('100k keys ms', Date.now() - t);
const Y = require('./node_modules/cdk8s/node_modules/yaml');
t = Date.now();
Y.parseAllDocuments('data:\n' + Array.from({ length: 100_000 }, (_, i) => `  k${i}: v\n`).join(''), { schema: 'failsafe', version: '1.1', uniqueKeys: false, keepSourceTokens: true, prettyErrors: true });
console.log('yaml parse ms', Date.now() - t);
