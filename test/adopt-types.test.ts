/**
 * Issue 27 point 1: `AdoptSidecarProps.containerName` is required in the type (and in API.md), as
 * it is at run time: a workload may carry several containers, and a guess would move the app.
 * Type-checked as a user's strict cdk8s app would be (test/util/snippets.ts, the snippet check).
 */
import { compileSnippets } from './util/snippets';

test('AdoptSidecar without containerName does not type-check; with it, it does', () => {
  const snippet = (code: string) => ({ file: 'test/adopt-types.test.ts', line: 1, code, info: '' });
  const without = compileSnippets([snippet("new AdoptSidecar(chart, 'proxy', { workload: web });")]);
  expect(without.map(d => d.message)).toEqual([expect.stringMatching(/Property 'containerName' is missing/)]);
  const named = compileSnippets([snippet("new AdoptSidecar(chart, 'proxy', { workload: web, containerName: 'cloud-sql-proxy' });")]);
  expect(named).toEqual([]);
}, 120_000);
