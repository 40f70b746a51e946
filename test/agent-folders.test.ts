/**
 * An agent is one folder. Each log agent lives in `src/agents/<name>/` (its options, default image,
 * factory checks and container in `agent.ts`; its config writer and shutdown model beside it) and is
 * listed once in the registry, `src/agents/registry.ts`; everything else reads the registry.
 *
 * The rule: no file of src/ outside a registered agent's own folder and the registry names that
 * agent, in code or in a comment: none of its `names` (`LogAgentSpec.names`: `vector`,
 * `fluent-bit`, `fluent bit`, `fluentbit`, `fluentd`, ...) occurs in the file's text, whatever the
 * case, as part of any word (so `Vector's`, `LogAgent.fluentBit()`, `FLUENTD_AGENT` count). The
 * OpenTelemetry Collector's folder is also `WithTracer`'s agent, whose construct names the
 * collector: its log agent's names are the words only the log agent has
 * (`LogAgent.otelCollector`, `OtelCollectorLogOptions`, `filelog`).
 */
import * as fs from 'fs';
import * as path from 'path';
import { LogAgent } from '../src';

const SRC = path.join(__dirname, '..', 'src');
const REGISTRY = 'agents/registry.ts';

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.relative(SRC, path.join(dir, e.name)).split(path.sep).join('/')] : []);
}

/** The files of src/ (relative) that name an agent outside its folder and the registry: `file: name`. */
function misplacedNames(files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const agent of LogAgent._registered) {
    for (const [file, text] of Object.entries(files)) {
      if (file === REGISTRY || file.startsWith(`agents/${agent.name}/`)) continue;
      const lower = text.toLowerCase();
      for (const name of agent.names) if (lower.includes(name.toLowerCase())) found.push(`src/${file}: ${name}`);
    }
  }
  return found.sort();
}

const FILES = Object.fromEntries(sourceFiles().map(f => [f, fs.readFileSync(path.join(SRC, f), 'utf8')]));

test('no file of src/ names a log agent outside the agent\'s folder and the registry', () => {
  expect(Object.keys(FILES).length).toBeGreaterThan(50);
  expect(misplacedNames(FILES)).toEqual([]);
});

test('the rule can fail: a name in a comment or in code, in any case, outside the folder', () => {
  const [first, second] = LogAgent._registered;
  expect(misplacedNames({
    'with-log-agent.ts': `// as ${first.names[0].toUpperCase()} does\n`,
    [`agents/${second.name}/config.ts`]: `const x = '${first.names[0]}';\n`,
    [`agents/${first.name}/config.ts`]: `const x = '${first.names[0]}';\n`,
    [REGISTRY]: `${first.names[0]} ${second.names[0]}`,
  })).toEqual([`src/agents/${second.name}/config.ts: ${first.names[0]}`, `src/with-log-agent.ts: ${first.names[0]}`].sort());
});

test('every registered agent is a folder of src/agents/ with its face (agent.ts), named after it, and a factory of LogAgent', () => {
  expect(LogAgent._registered.map(a => a.name)).toEqual(['fluent-bit', 'vector', 'fluentd', 'otel-collector']);
  for (const agent of LogAgent._registered) {
    expect({ agent: agent.name, face: fs.existsSync(path.join(SRC, 'agents', agent.name, 'agent.ts')) }).toEqual({ agent: agent.name, face: true });
    expect({ agent: agent.name, factory: typeof (LogAgent as any)[agent.factory] }).toEqual({ agent: agent.name, factory: 'function' });
    expect((LogAgent as any)[agent.factory]().name).toBe(agent.name);
    expect(agent.names.length).toBeGreaterThan(0);
  }
  // and every static factory of LogAgent is a registered agent's
  const factories = Object.getOwnPropertyNames(LogAgent).filter(k => typeof (LogAgent as any)[k] === 'function' && !k.startsWith('_'));
  expect(factories.sort()).toEqual(LogAgent._registered.map(a => a.factory).sort());
});

test('only the registry imports an agent\'s face (src/agents/<agent>/agent.ts)', () => {
  const importers = Object.entries(FILES)
    .filter(([file, text]) => file !== REGISTRY && /from '[./]*(?:agents\/)?[a-z-]+\/agent'/.test(text) && !file.startsWith('agents/') ||
      (file.startsWith('agents/') && file !== REGISTRY && /from '\.\.\/[a-z-]+\/agent'/.test(text)))
    .map(([file]) => file);
  expect(importers).toEqual([]);
});
