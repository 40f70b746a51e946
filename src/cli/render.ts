/**
 * `cdk8s-sidecars render --config sidecars.yaml`, a Helm post-renderer: the chart's manifests on
 * stdin, the same on stdout with the sidecars added. Not a second engine: the input becomes the
 * `ApiObject`s of a cdk8s `Include` in one Chart of one App, the config's entries become the
 * library's own constructs (WithLogAgent, WithEnvoy, WithTracer, AdoptSidecar) on them, and the
 * output is that App's `synthYaml()`: the input objects in their order, then the new ones (the
 * agents' ConfigMaps). The construct tree, so that a cdk8s app can give the same bytes:
 *
 *   App
 *   └── Chart 'sidecars'
 *       ├── Include 'input'            (the objects of stdin)
 *       └── <kind>-<name>[-<namespace>]-<sidecar>   (lower case; sidecar: log-agent, envoy,
 *                                        tracer, adopt-<containerName>), one per workload and sidecar
 */
import { App, ApiObject, Chart, Include } from 'cdk8s';
import { Construct } from 'constructs';
import { SUPPORTED_KINDS } from '../facts/kinds';
import { WithEnvoy } from '../with-envoy';
import { WithLogAgent } from '../with-log-agent';
import { AdoptSidecar } from '../with-sidecar';
import { WithTracer } from '../with-tracer';
import { CommandError, loadDocuments, parseYaml, withTempFile } from './io';
import { ConfigError, RenderConfig, readRenderConfig, selects } from './render-config';

/** The id of the chart that holds everything (it shows in the ConfigMaps' generated names). */
export const RENDER_CHART_ID = 'sidecars';

/** Reads the config file: exactly one YAML document. */
export function loadRenderConfig(file: string): RenderConfig {
  let docs: any[];
  try {
    docs = loadDocuments(file);
  } catch (e) {
    throw new ConfigError(file, (e as Error).message.replace(`${file}: `, ''));
  }
  if (docs.length !== 1) throw new ConfigError(file, `expected one YAML document, found ${docs.length}`);
  try {
    return readRenderConfig(docs[0]);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${file}: ${e.keyPath}`, e.message.slice(e.keyPath.length + 2));
    throw e;
  }
}

/** The construct id of a sidecar on an object: `<kind>-<name>[-<namespace>]-<sidecar>`, lower case. */
export function sidecarId(obj: any, sidecar: string): string {
  return [obj.kind, obj.metadata?.name, obj.metadata?.namespace, sidecar].filter(x => x).join('-').toLowerCase();
}

/** Renders `input` (multi-document YAML) with the sidecars of `config`. */
export function render(input: string, config: RenderConfig, configFile: string): string {
  const { docs, errors } = parseYaml(input);
  if (errors.length > 0) throw new CommandError(`stdin: not valid YAML: ${errors[0]}`);
  return withTempFile(input, file => {
    const app = new App();
    const chart = new Chart(app, RENDER_CHART_ID);
    docs.forEach((d, i) => {
      const bad = d === null || typeof d !== 'object' || Array.isArray(d) ? 'is not a Kubernetes object'
        : typeof d.apiVersion !== 'string' ? 'has no apiVersion' : typeof d.kind !== 'string' ? 'has no kind' : undefined;
      if (bad) throw new CommandError(`stdin: document ${i + 1} (${d?.kind ?? '?'} '${d?.metadata?.name ?? '?'}') ${bad}; a post-renderer gets Kubernetes objects only`);
    });
    let objects: ApiObject[];
    try {
      objects = new Include(chart, 'input', { url: file }).apiObjects;
    } catch (e) {
      // e.g. two objects of the same kind, name and namespace (cdk8s names the construct after them)
      throw new CommandError(`stdin: cdk8s' Include cannot take the input: ${(e as Error).message.split('\n')[0]}`);
    }
    if (objects.length !== docs.length) throw new CommandError(`stdin: read ${docs.length} documents but cdk8s' Include made ${objects.length} objects`);
    attach(chart, objects, docs, config, configFile);
    try {
      return app.synthYaml();
    } catch (e) {
      throw new CommandError((e as Error).message);
    }
  });
}

function attach(chart: Construct, objects: ApiObject[], docs: any[], config: RenderConfig, configFile: string): void {
  const target = {
    ...(config.kubernetesVersion !== undefined ? { kubernetesVersion: config.kubernetesVersion } : {}),
    ...(config.sidecarContainersGate !== undefined ? { sidecarContainersGate: config.sidecarContainersGate } : {}),
  };
  /** `<object index>|<sidecar>` -> the config key that gave it (a second entry giving the same sidecar is an error). */
  const made = new Map<string, string>();
  for (const entry of config.workloads) {
    const at = (key: string) => `${configFile}: ${entry.path}${key === '' ? '' : `.${key}`}`;
    if (entry.select.kind !== undefined && !SUPPORTED_KINDS.includes(entry.select.kind)) {
      throw new ConfigError(at('select.kind'), `'${entry.select.kind}' has no pod template; use one of ${SUPPORTED_KINDS.join(', ')}`);
    }
    const hits = docs.map((_, i) => i).filter(i => SUPPORTED_KINDS.includes(docs[i]?.kind) && selects(entry.select, docs[i]));
    if (hits.length === 0) {
      const present = docs.filter(d => SUPPORTED_KINDS.includes(d?.kind)).map(d => `${d.kind} ${d.metadata?.name}`);
      throw new ConfigError(at('select'), `selects no workload of the input (its workloads: ${present.length > 0 ? present.join(', ') : 'none'})`);
    }
    for (const i of hits) {
      const workload = objects[i];
      const add = (key: string, sidecar: string, make: (id: string) => void) => {
        const id = sidecarId(docs[i], sidecar);
        const earlier = made.get(`${i}|${sidecar}`);
        if (earlier !== undefined) {
          throw new ConfigError(at(key), `${docs[i].kind} '${docs[i].metadata?.name}' already gets this sidecar from ${earlier}; a workload gets each sidecar once`);
        }
        made.set(`${i}|${sidecar}`, `${entry.path}.${key}`);
        try {
          make(id);
        } catch (e) {
          throw new ConfigError(at(key), (e as Error).message);
        }
      };
      if (entry.logAgent) add('logAgent', 'log-agent', id => new WithLogAgent(chart, id, { ...target, ...(entry.logAgent as any), workload }));
      if (entry.envoy) add('envoy', 'envoy', id => new WithEnvoy(chart, id, { ...target, ...(entry.envoy as any), workload }));
      if (entry.tracer) add('tracer', 'tracer', id => new WithTracer(chart, id, { ...target, ...(entry.tracer as any), workload }));
      entry.adopt.forEach((props, k) =>
        add(`adopt[${k}]`, `adopt-${props.containerName}`, id => new AdoptSidecar(chart, id, { ...target, ...(props as any), workload })));
    }
  }
}
