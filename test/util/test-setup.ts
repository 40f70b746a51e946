/**
 * No temporary directory is left behind by `npm test` (issue 36: one run left about 6150
 * `/tmp/cdk8s.outdir.*`). cdk8s' `Testing.app()` (and `Testing.chart()`, which calls it) creates a
 * fresh `os.tmpdir()/cdk8s.outdir.*` for every app it returns and never removes it. Here each test
 * file's apps get their own fresh directories inside one directory of the file, removed after
 * the file. (Loaded by jest's setupFilesAfterEnv, .projenrc.ts.)
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AppProps, Testing } from 'cdk8s';

const original = Testing.app;
let root: string | undefined;

(Testing as any).app = function app(props?: AppProps) {
  if (props?.outdir !== undefined) return original.call(Testing, props);
  root ??= fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-jest-'));
  return original.call(Testing, { ...props, outdir: fs.mkdtempSync(path.join(root, 'cdk8s.outdir.')) });
};

afterAll(() => {
  if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
  root = undefined;
});
