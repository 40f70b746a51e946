/** The user-facing documentation, for the tests that check what it says against the source. */
import * as fs from 'fs';
import * as path from 'path';
import { ROOT, markdownFiles } from './snippets';

/** One documentation file (`README.md`, `docs/envoy.md`, ...), with white space runs as one space when `flat`. */
export function readDoc(file: string, flat = false): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return flat ? text.replace(/\s+/g, ' ') : text;
}

/** README.md, CONTRIBUTING.md and every docs/*.md, one after another. */
export function allDocs(flat = false): string {
  return markdownFiles().map(f => readDoc(f, flat)).join('\n');
}

/** A container's requests and limits as Kubernetes quantities ('20m', '32Mi'). */
export interface DocumentedResources {
  readonly requests: { readonly 'cpu': string; readonly 'memory': string; readonly 'ephemeral-storage'?: string };
  readonly limits: { readonly cpu: string; readonly memory: string };
}

/** What the docs call each container whose default resources they state. */
export type ResourceOwner = 'fluent-bit' | 'vector' | 'fluentd' | 'tracer' | 'envoy' | 'tools' | 'sidecar';

const QUANTITIES = String.raw`(\d+m) ?\/ ?(\d+Mi), limits (\d+m) ?\/ ?(\d+Mi)`;

function resourcesFrom(m: RegExpMatchArray | null, where: string): DocumentedResources {
  if (!m) throw new Error(`${where} no longer states the default resources in the form this test reads ('requests 20m/32Mi, limits 200m/128Mi')`);
  return { requests: { cpu: m[1], memory: m[2] }, limits: { cpu: m[3], memory: m[4] } };
}

/** With the ephemeral-storage request the docs state (none: the container requests none). */
function withStorage(r: DocumentedResources, storage: string | undefined): DocumentedResources {
  return storage === undefined ? r : { ...r, requests: { ...r.requests, 'ephemeral-storage': storage } };
}

/**
 * The default requests and limits as the user-facing documentation states them (not as the code
 * has them): the log agents' comparison table in docs/log-agents.md, the options of
 * docs/envoy.md and docs/tracer.md, the hook tools in docs/shutdown.md, WithSidecar's defaults
 * in README.md. Tests compare the synthesized containers with these, so that the docs and the
 * code are checked against each other.
 */
export function documentedResources(): Record<ResourceOwner, DocumentedResources> {
  // | | Fluent Bit | Vector | Fluentd |  ...  | default resources | 20m / 32Mi, limits 200m / 128Mi | ... |
  const lines = readDoc('docs/log-agents.md').split('\n');
  const header = lines.findIndex(l => /^\|\s*\|\s*Fluent Bit\s*\|\s*Vector\s*\|\s*Fluentd\s*\|$/.test(l.trim()));
  const row = lines.findIndex((l, i) => i > header && l.startsWith('| default resources |'));
  if (header < 0 || row < 0) throw new Error('docs/log-agents.md no longer has the agents\' table with a "default resources" row');
  const cells = lines[row].split('|').slice(2, 5).map(c => c.trim());
  // | ephemeral-storage request (...) | buffer + 4 Mi: 260Mi with the default volume | 4Mi (no disk buffer) | ... |
  const storageRow = lines.findIndex((l, i) => i > header && l.startsWith('| ephemeral-storage request '));
  if (storageRow < 0) throw new Error('docs/log-agents.md no longer has the agents\' table with an "ephemeral-storage request" row');
  const storage = lines[storageRow].split('|').slice(2, 5).map(c => /\b(\d+Mi)\b/.exec(c)?.[1]);
  const agent = (i: number, name: string) => withStorage(resourcesFrom(new RegExp(`^${QUANTITIES}$`).exec(cells[i]), `docs/log-agents.md (${name})`), storage[i]);
  const option = (file: string) => resourcesFrom(new RegExp(`\`resources\` \\(default requests ${QUANTITIES}\\)`).exec(readDoc(file, true)), file);
  return {
    'fluent-bit': agent(0, 'Fluent Bit'),
    'vector': agent(1, 'Vector'),
    'fluentd': agent(2, 'Fluentd'),
    'envoy': option('docs/envoy.md'),
    'tracer': option('docs/tracer.md'),
    'tools': withStorage(resourcesFrom(new RegExp(`\`sidecar-tools\` init container \\(\`busybox:[^\`]+\`, restricted, requests ${QUANTITIES},`)
      .exec(readDoc('docs/shutdown.md', true)), 'docs/shutdown.md (the hook tools)'),
    /an ephemeral-storage request of (\d+Mi) and no limit/.exec(readDoc('docs/shutdown.md', true))?.[1]),
    'sidecar': resourcesFrom(new RegExp(`Defaults: the Pod Security "restricted" context .{0,300}?, requests ${QUANTITIES},`)
      .exec(readDoc('docs/any-sidecar.md', true)), 'docs/any-sidecar.md (WithSidecar\'s defaults)'),
  };
}

/**
 * Each log agent's ephemeral-storage request as docs/log-agents.md's "Disk" table states it for the
 * default log volume: with a network output (`buffered`) and with `stdout()`.
 */
export function documentedDiskRequests(): Record<'fluent-bit' | 'vector' | 'fluentd', { readonly buffered: string; readonly stdout: string }> {
  const text = readDoc('docs/log-agents.md');
  const section = text.slice(text.indexOf('\n## Disk: '), text.indexOf('\n## ', text.indexOf('\n## Disk: ') + 1));
  const row = (name: string) => {
    const line = section.split('\n').find(l => l.startsWith(`| ${name} |`));
    const sizes = [...(line?.split('|').slice(-2, -1)[0] ?? '').matchAll(/`(\d+Mi)`/g)].map(m => m[1]);
    if (sizes.length === 0) throw new Error(`docs/log-agents.md "Disk" no longer has a request for ${name} in the form this test reads`);
    return { buffered: sizes[0], stdout: sizes[1] ?? sizes[0] };
  };
  return { 'fluent-bit': row('Fluent Bit'), 'vector': row('Vector'), 'fluentd': row('Fluentd') };
}
