/**
 * What Helm 4 runs for `--post-renderer cdk8s-sidecars` (plugin.yaml beside this file):
 * `cdk8s-sidecars render` with the `--post-renderer-args` Helm appends, manifests on stdin and
 * stdout, the exit code of the command. The package's compiled command is two directories up
 * (lib/cli/main.js); node starts this file by its real path, so a plugin linked by
 * `helm plugin install DIR` (a symlink in $HELM_DATA_HOME/plugins) still finds it.
 *
 * Helm 4.3.2 reads the plugin's stderr into a buffer it never prints
 * (internal/plugin/runtime_subprocess.go, runPostrenderer; executeCmd reports only "exited with
 * error"), so the command's errors and warnings would be lost. Run by Helm (HELM_PLUGIN_NAME is
 * set, runtime_subprocess.go) on Linux, this writes them to Helm's own stderr instead
 * (/proc/<Helm's pid>/fd/2: a terminal, a pipe or a file; not a socket, which cannot be reopened,
 * and then they stay lost); CDK8S_SIDECARS_HELM_STDERR=plugin keeps them on the plugin's stderr.
 */
'use strict';
const fs = require('fs');
const path = require('path');

function helmStderr() {
  if (!process.env.HELM_PLUGIN_NAME || process.env.CDK8S_SIDECARS_HELM_STDERR === 'plugin' || process.platform !== 'linux') {
    return undefined;
  }
  try {
    return fs.openSync(`/proc/${process.ppid}/fd/2`, 'a');
  } catch {
    return undefined;
  }
}

const fd = helmStderr();
if (fd !== undefined) {
  process.stderr.write = (chunk, encoding, callback) => {
    fs.writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done) done();
    return true;
  };
}

const main = path.join(fs.realpathSync(__dirname), '..', '..', 'lib', 'cli', 'main.js');
if (!fs.existsSync(main)) {
  process.stderr.write(`cdk8s-sidecars (Helm plugin): ${main} does not exist; in a clone, compile it first (npx projen compile); from npm, reinstall cdk8s-sidecars.\n`);
  process.exitCode = 1;
} else {
  process.exitCode = require(main).main(['render', ...process.argv.slice(2)]);
}
