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
 * (/proc/<Helm's pid>/fd/2) where that is a terminal or a pipe. Not a regular file: reopened, it
 * would have an offset of its own, and Helm's next line would overwrite the message; nor a socket,
 * which cannot be reopened: there they stay lost, as without this.
 * CDK8S_SIDECARS_HELM_STDERR=plugin keeps them on the plugin's stderr.
 */
'use strict';
const fs = require('fs');
const path = require('path');

function helmStderr() {
  if (!process.env.HELM_PLUGIN_NAME || process.env.CDK8S_SIDECARS_HELM_STDERR === 'plugin' || process.platform !== 'linux') {
    return undefined;
  }
  let fd;
  try {
    // O_NONBLOCK: a pipe whose reader is gone fails at once (ENXIO) instead of blocking the open
    fd = fs.openSync(`/proc/${process.ppid}/fd/2`, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_NONBLOCK);
    const stat = fs.fstatSync(fd);
    if (stat.isFIFO() || stat.isCharacterDevice()) return fd;
  } catch {
    // no such file, a socket (ENXIO), no permission: the messages stay on the plugin's stderr
  }
  if (fd !== undefined) fs.closeSync(fd);
  return undefined;
}

const fd = helmStderr();
if (fd !== undefined) {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  process.stderr.write = (chunk, encoding, callback) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk;
    for (let at = 0, tries = 0; at < bytes.length && tries < 500;) {
      try {
        at += fs.writeSync(fd, bytes, at);
      } catch (e) {
        if (e.code !== 'EAGAIN') break;
        tries++;
        Atomics.wait(pause, 0, 0, 10); // a full pipe (non-blocking): wait for Helm's reader, 5 s at most
      }
    }
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
