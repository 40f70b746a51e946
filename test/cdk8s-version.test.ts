/**
 * Which cdk8s and constructs the tests run against: the project's (in the peer ranges), or the
 * ones scripts/cdk8s-versions-test.sh puts in their place (CDK8S_SIDECARS_EXPECT_CDK8S and
 * CDK8S_SIDECARS_EXPECT_CONSTRUCTS), so that the run against the oldest and the newest cannot pass
 * on the project's own.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const peers: Record<string, string> = require('../package.json').peerDependencies;

const parts = (v: string) => v.replace(/^\^/, '').split('.').map(Number);

test.each([
  ['cdk8s', process.env.CDK8S_SIDECARS_EXPECT_CDK8S],
  ['constructs', process.env.CDK8S_SIDECARS_EXPECT_CONSTRUCTS],
])('the %s the tests load is the one asked for, in the peer range (^major.minor.patch)', (name, expected) => {
  const loaded: string = require(`${name}/package.json`).version;
  if (expected !== undefined) expect(loaded).toBe(expected);
  const range = peers[name];
  expect(range).toMatch(/^\^\d+\.\d+\.\d+$/);
  const [have, floor] = [parts(loaded), parts(range)];
  expect(have[0]).toBe(floor[0]);
  const newer = have[1] !== floor[1] ? have[1] > floor[1] : have[2] >= floor[2];
  expect(newer).toBe(true);
});
