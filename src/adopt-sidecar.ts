import { Construct } from 'constructs';
import { snapshot } from './bind/checks';
import { RANK } from './engine/spec';
import { Where } from './private/errors';
import { Json } from './private/json';
import { SidecarBase, SidecarCommonProps } from './sidecar';
import { SidecarCheck, SidecarRunOptions, runOptions } from './with-sidecar';

/**
 * Props of `AdoptSidecar`.
 */
export interface AdoptSidecarProps extends SidecarCommonProps, SidecarRunOptions {
  /**
   * The name of the container to adopt: an entry of the workload's `spec.containers`, as the
   * manifest names it (e.g. `kubectl get -o yaml`). Required: a workload may carry several
   * containers, and guessing which is the sidecar would move the app.
   */
  readonly containerName: string;
}

/**
 * Makes a container the workload already has (in `spec.containers`, by `containerName`) a
 * version-aware sidecar: moved to a native sidecar (init container with `restartPolicy: Always`)
 * for native targets, every one of its own fields kept; left in `spec.containers` below, with the
 * shutdown and Job handling. The startup check becomes its `startupProbe`. Works on cdk8s-plus
 * workloads, raw `ApiObject`s and objects from `Include` or `Helm`: the legacy sidecars of vendor
 * manifests move to native cluster by cluster without forking the YAML.
 */
export class AdoptSidecar extends SidecarBase {
  /** The checks whose ports are compared with the adopted container's at synthesis. */
  private checks: NamedChecks = [];

  constructor(scope: Construct, id: string, props: AdoptSidecarProps) {
    // read once (snapshot), then checked: the container's name is the same value as the copy's
    super(scope, id, checkAdoptProps(scope, id, props = snapshot(props)), props?.containerName);
    props = this._props as AdoptSidecarProps;
    const who = new Where(this.describe());
    if (props.serveInitContainers) {
      throw who.error('serveInitContainers has nothing to give for an adopted container (it brings no mounts or env for the app)', props.serveInitContainers, 'drop it');
    }
    const run = runOptions(who, props, this.containerName);
    const container: Json = {
      ...(run.livenessProbe ? { livenessProbe: run.livenessProbe } : {}),
      name: this.containerName,
      ...(props.resources ? { resources: this._resources({ cpuRequest: '50m', cpuLimit: '500m', memoryRequest: '64Mi', memoryLimit: '256Mi' }) } : {}),
      ...(run.startupProbe ? { startupProbe: run.startupProbe } : {}),
    };
    this.checks = [['startupCheck', props.startupCheck], ['livenessCheck', props.livenessCheck]];
    this._attachContainer({
      kind: `AdoptSidecar '${this.containerName}'`,
      rank: RANK.CUSTOM,
      container,
      volumes: [],
      shutdown: run.shutdown,
      hold: run.hold,
      adopt: true,
      quit: run.quit,
    });
  }

  /** @internal */
  protected _checkWorkload(podSpec: Json | undefined): string[] {
    return checkAdoptedPorts(this._where(), this.containerName, podSpec, this.checks);
  }
}

/**
 * The ports of the adopted container's checks against the ports it declares (read from the
 * workload at synthesis), as WithSidecar's are against its `ports`: a check on a port the
 * container does not declare, when it declares some, is most likely a typo, and the probe would
 * never pass (a startup check keeps the native pod in Init; a liveness check restarts the sidecar
 * for ever).
 */
type NamedChecks = ReadonlyArray<readonly [string, SidecarCheck | undefined]>;

function checkAdoptedPorts(who: Where, name: string, podSpec: Json | undefined, checks: NamedChecks): string[] {
  const container = (podSpec?.containers ?? []).find((c: Json) => c?.name === name);
  const declared: number[] = (container?.ports ?? []).map((p: Json) => p?.containerPort).filter((p: unknown) => typeof p === 'number');
  if (declared.length === 0) return [];
  const errors: string[] = [];
  for (const [prop, check] of checks) {
    const port = check?._port();
    if (port === undefined || declared.includes(port)) continue;
    errors.push(
      `${who}: ${prop} connects to port ${port}, which is none of the ports container '${name}' declares (${declared.join(', ')}): ` +
      'the probe would never pass. Use one of its ports in SidecarCheck, or check the port number.',
    );
  }
  return errors;
}

/**
 * `containerName` names the container to adopt: required by the type, and checked here for a
 * caller without types (JavaScript, a jsii host passing null) before the base uses it.
 */
function checkAdoptProps(scope: Construct, id: string, props: AdoptSidecarProps): AdoptSidecarProps {
  if (props?.containerName === undefined) {
    const path = [scope.node.path, id].filter(x => x !== '').join('/');
    throw new Where(`AdoptSidecar '${path}'`).error('containerName is required', undefined,
      "the name of the container of the workload's spec.containers to adopt (e.g. 'cloud-sql-proxy', as in the manifest)", ': ');
  }
  return props;
}
