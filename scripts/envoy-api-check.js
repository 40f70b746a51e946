#!/usr/bin/env node
/**
 * Reads every proto field of CHECKED_AT_PIN (test/envoy-api.test.ts: what the rendered bootstrap and
 * SDS files set) in the Envoy API of a release, and fails on a field that is missing there or
 * marked deprecated:
 *
 *   node scripts/envoy-api-check.js 1.40.0
 *
 * The API is github.com/envoyproxy/go-control-plane/envoy at the release's version, a Go module
 * (the Go module proxy serves it; its COMMIT file names the envoy commit it was generated from):
 * each message is a Go struct whose fields carry `protobuf:"...,name=<field>,..."` tags, a field of
 * a oneof sits in a wrapper struct `<Message>_<Field>`, and a deprecated field is preceded by
 * `// Deprecated: Marked as deprecated in <file>.proto.` (protoc-gen-go). Needs Go; used when
 * bumping Envoy (CONTRIBUTING.md), not by `npm test`.
 */
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const version = process.argv[2];
if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
  console.error('usage: node scripts/envoy-api-check.js <envoy version, e.g. 1.40.0>');
  process.exit(2);
}
const testFile = path.join(__dirname, '..', 'test', 'envoy-api.test.ts');
const src = fs.readFileSync(testFile, 'utf8');
const from = src.indexOf('const CHECKED_AT_PIN');
const fields = [...src.slice(from, src.indexOf(']);', from)).matchAll(/'([A-Za-z0-9_.]+)'/g)].map((m) => m[1]);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'envoy-api-'));
let root;
try {
  fs.writeFileSync(path.join(work, 'go.mod'), 'module envoyapicheck\n');
  const out = execFileSync('go', ['mod', 'download', '-json', `github.com/envoyproxy/go-control-plane/envoy@v${version}`], { cwd: work, encoding: 'utf8' });
  root = JSON.parse(out).Dir;
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
const commit = fs.existsSync(path.join(root, 'COMMIT')) ? fs.readFileSync(path.join(root, 'COMMIT'), 'utf8').trim() : 'unknown';

const packages = new Map();
function packageText(dir) {
  if (!packages.has(dir)) {
    const full = path.join(root, dir);
    packages.set(dir, fs.existsSync(full)
      ? fs.readdirSync(full).filter((f) => f.endsWith('.pb.go')).map((f) => fs.readFileSync(path.join(full, f), 'utf8')).join('\n')
      : undefined);
  }
  return packages.get(dir);
}

const problems = [];
for (const f of fields) {
  const parts = f.split('.');
  const first = parts.findIndex((p) => /^[A-Z]/.test(p));
  const dir = parts.slice(1, first).join('/'); // envoy.config.cluster.v3 -> config/cluster/v3 (the module is .../envoy)
  const message = parts.slice(first, -1).join('_'); // nested messages: Bootstrap_StaticResources
  const field = parts[parts.length - 1];
  const text = packageText(dir);
  if (text === undefined) { problems.push(`${f}: no package ${dir}`); continue; }
  let found = false;
  let deprecated = false;
  for (const m of text.matchAll(new RegExp(`^type (${message}(?:_[A-Za-z0-9_]+)?) struct \\{\\n([\\s\\S]*?)^\\}`, 'gm'))) {
    // a wrapper struct counts only as a oneof case of this message
    if (m[1] !== message && !new RegExp(`func \\(\\*${m[1]}\\) is${message}_`).test(text)) continue;
    const lines = m[2].split('\n');
    lines.forEach((line, i) => {
      if (!line.includes(`,name=${field},`)) return;
      found = true;
      for (let j = i - 1; j >= 0 && /^\s*\/\//.test(lines[j]); j--) {
        if (lines[j].includes('Deprecated: Marked as deprecated')) deprecated = true;
      }
    });
  }
  if (!found) problems.push(`${f}: not declared`);
  else if (deprecated) problems.push(`${f}: deprecated`);
}
console.log(`go-control-plane/envoy v${version} (envoy ${commit}): ${fields.length} fields read, ${problems.length} missing or deprecated`);
for (const p of problems) console.log(`  ${p}`);
process.exit(problems.length === 0 ? 0 : 1);
