/**
 * `cdk8s-sidecars timeline FILE...`: the start/stop timeline of each workload of the files.
 *
 * The timeline itself is the library's `SidecarTimeline` (src/timeline.ts:
 * `SidecarTimeline.ofManifest(manifest, options)` with `toTable()`). This module is only the
 * command's plumbing: it finds the workloads and prints one table each, through the small
 * interface below (SidecarTimeline by default).
 */
import { Duration } from 'cdk8s';
import { CommandError, STDIN, loadDocuments } from './io';
import { escapeLine } from './reader';
import { SidecarTimeline } from '../timeline';
import { CliTarget } from './target-options';
import { SUPPORTED_KINDS, podTemplateIn } from '../facts/kinds';

/** What the manifest cannot say (SidecarTimelineOptions beside the target). */
export interface TimelineExtras {
  readonly appShutdownTime?: Duration;
  readonly stopTimes?: { [name: string]: Duration };
  readonly legacySidecars?: string[];
}

/** What the command needs of a timeline: one per manifest, printed as a table. */
export interface TimelineSource {
  ofManifest(manifest: any, options: { kubernetesVersion: string; sidecarContainersGate: boolean } & TimelineExtras): { toTable(): string };
}

/** One block per workload: `file (document n): Kind ns/name`, then its table. */
export function timelines(
  files: readonly string[], target: CliTarget, extras: TimelineExtras = {}, source: TimelineSource = SidecarTimeline,
): string {
  const out: string[] = [];
  const options = { kubernetesVersion: target.raw, sidecarContainersGate: target.gate, ...extras };
  for (const file of files) {
    loadDocuments(file).forEach((doc, i) => {
      const items: any[] = typeof doc?.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items) ? doc.items : [doc];
      for (const item of items) {
        if (!SUPPORTED_KINDS.includes(item?.kind)) continue;
        const ns = item.metadata?.namespace ? `${item.metadata.namespace}/` : '';
        const where = escapeLine(`${file === STDIN ? 'stdin' : file} (document ${i + 1}): ${item.kind} ${ns}${item.metadata?.name ?? '?'}`);
        let table: string;
        try {
          table = source.ofManifest(withPrintableNames(item), options).toTable();
        } catch (e) {
          throw new CommandError(`${where}: ${(e as Error).message}`);
        }
        out.push(where, table.replace(/\n?$/, '\n'));
      }
    });
  }
  return out.join('\n');
}

/**
 * The workload with its containers' names escaped as one line each (escapeLine): the table prints
 * them, and a name with a line break (which the API server would refuse, but a file can hold) must
 * not forge a line of the output. Names without control characters are unchanged.
 */
function withPrintableNames(item: any): any {
  const copy = structuredClone(item);
  const spec = podTemplateIn(copy)?.spec;
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const containers = spec?.[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) if (c !== null && typeof c === 'object' && typeof c.name === 'string') c.name = escapeLine(c.name);
  }
  return copy;
}
