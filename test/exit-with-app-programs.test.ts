/**
 * The exit-with-app wrapper tells the app's processes from the sidecars' by their program
 * (`argv[0]`, src/engine/shutdown.ts `appScan`). A wrapped sidecar run as `sh` beside an app run
 * as `sh` made the wrapper take the app for a sidecar and stop the agent ~1.9 s before the app's
 * exit (a real kubelet, issue 34): the library refuses such a pod, naming the fix.
 */
import { ApiObject, Testing } from 'cdk8s';
import { SidecarMode, WithSidecar } from '../src';
import { manifestOf, newChart, podSpecOf } from './util/fixtures';

function synth(appCommand: string[] | undefined, sidecarCommand: string[]) {
  const { chart } = newChart();
  const workload = new ApiObject(chart, 'report', {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'report' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'report', image: 'busybox:1.36', ...(appCommand ? { command: appCommand } : {}) }] } } },
  });
  new WithSidecar(chart, 'side', {
    workload, kubernetesVersion: '1.27', mode: SidecarMode.LEGACY, containerName: 'side', image: 'busybox:1.36', command: sidecarCommand,
  });
  return Testing.synth(chart);
}

test('a wrapped sidecar whose program is the app container\'s is refused, naming both and the fix', () => {
  expect(() => synth(['sh', '-c', 'sleep 5'], ['sh', '-c', 'sleep 3600'])).toThrow(
    /the app container 'report' runs 'sh', the program of WithSidecar '[^']*side' \(container 'side'\)\..*would take 'report' for a sidecar and stop the agent while the app still runs\..*e\.g\. '\/bin\/sh' instead of 'sh'/s,
  );
});

test('a different spelling of the program, or an app without a command, is wrapped as before', () => {
  for (const app of [['/bin/sh', '-c', 'sleep 5'], undefined]) {
    const spec = podSpecOf(manifestOf(synth(app, ['sh', '-c', 'sleep 3600']), 'Job'));
    const side = spec.containers.find((c: any) => c.name === 'side');
    expect(side.command.slice(4)).toEqual(['sh', 'sh', '-c', 'sleep 3600']);
    expect(side.command[3]).toContain('case "$a" in ');
  }
});

/** A Deployment whose legacy sidecar waits in its preStop hook for the app's processes to be gone (`watchAppExit`). */
function synthWatching(appCommand: string[] | undefined, sidecarCommand: string[]) {
  const { chart } = newChart();
  const workload = new ApiObject(chart, 'web', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'busybox:1.36', ...(appCommand ? { command: appCommand } : {}) }] } },
    },
  });
  new WithSidecar(chart, 'side', {
    workload, kubernetesVersion: '1.27', mode: SidecarMode.LEGACY, containerName: 'side', image: 'busybox:1.36', command: sidecarCommand, watchAppExit: true,
  });
  return Testing.synth(chart);
}

test('watchAppExit: an app container that runs a sidecar\'s program is refused (its preStop wait would take the app for a sidecar), naming both and the fix', () => {
  expect(() => synthWatching(['sh', '-c', 'sleep 5'], ['sh', '-c', 'sleep 3600'])).toThrow(
    /the app container 'web' runs 'sh', the program of WithSidecar '[^']*side' \(container 'side'\)\. WithSidecar '[^']*side' has watchAppExit: its preStop hook waits until no process of the app is left.*would take 'web' for a sidecar and stop the agent while the app still runs\..*e\.g\. '\/bin\/sh' instead of 'sh'/s,
  );
});

test('watchAppExit: a different spelling of the program, or an app without a command, keeps the wait as before', () => {
  for (const app of [['/bin/sh', '-c', 'sleep 5'], undefined]) {
    const spec = podSpecOf(manifestOf(synthWatching(app, ['sh', '-c', 'sleep 3600']), 'Deployment'));
    const side = spec.containers.find((c: any) => c.name === 'side');
    expect(side.lifecycle.preStop.exec.command.join(' ')).toContain('case "$a" in sh) ');
  }
});
