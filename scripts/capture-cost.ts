/**
 * What `captureStdout` costs the app (issue 51), measured locally with a real busybox (Debian's
 * busybox or busybox-static; the pod runs the same applets from `sidecar-tools`):
 * - throughput: a tight print loop (busybox `seq`, block-buffered; and a busybox `sh` loop that
 *   writes each line with its own write(2)) with its stdout to /dev/null, without and with the
 *   wrapper (the copier writes each line to stdout and to the file, flushing both);
 * - latency: a Node.js app that writes a timestamped line every millisecond; the time from its write
 *   to the line's arrival at the reader, directly and through the wrapper: the p50/p99 added per line.
 *
 *   npx ts-node --transpile-only --project projenrc/tsconfig.json scripts/capture-cost.ts
 *
 * Prints a Markdown table. Temporary files only; every process it starts ends with it.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { captureScript } from '../src/engine/capture';

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
if (!BUSYBOX) {
  console.error('busybox not found (Debian: apt-get install busybox-static)');
  process.exit(2);
}
const B = BUSYBOX;

function wrapped(argv: string[], dir: string): string[] {
  return [B, 'sh', '-c', captureScript(B), 'sh', dir, String(10 * 1024 * 1024), '5', ...argv];
}

function timeRun(argv: string[]): number {
  const start = process.hrtime.bigint();
  const null_ = fs.openSync('/dev/null', 'w');
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', null_, 'inherit'] });
  fs.closeSync(null_);
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function throughput(name: string, app: string[], lines: number, runs = 3): string[] {
  const direct: number[] = [];
  const viaWrapper: number[] = [];
  for (let i = 0; i < runs; i++) {
    direct.push(timeRun(app));
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'capture-cost-')), '.stdout-app');
    viaWrapper.push(timeRun(wrapped(app, dir)));
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  const d = median(direct);
  const w = median(viaWrapper);
  return [name, String(lines), `${Math.round(lines / d).toLocaleString('en')}`, `${Math.round(lines / w).toLocaleString('en')}`, `${(w / d).toFixed(1)}x`];
}

/** The app: one line every `gapMs`, each with the wall-clock time of its write in microseconds. */
const LATENCY_APP = 'const fs = require("fs"); const n = Number(process.argv[1]); let i = 0; ' +
  'const t = setInterval(() => { fs.writeSync(1, `${Math.round((performance.timeOrigin + performance.now()) * 1000)} ${i}\\n`); ' +
  'if (++i >= n) clearInterval(t); }, 1);';

async function latency(argv: string[]): Promise<number[]> {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const delays: number[] = [];
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const now = Math.round((performance.timeOrigin + performance.now()) * 1000);
    rest += chunk.toString();
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const l of lines) delays.push(now - Number(l.split(' ')[0]));
  });
  await new Promise(resolve => child.on('close', resolve));
  return delays;
}

async function main(): Promise<void> {
  const n = 200000;
  const rows = [
    throughput('busybox seq (block-buffered stdout)', [B, 'seq', '1', String(n)], n),
    throughput('busybox sh echo loop (a write per line)', [B, 'sh', '-c', `i=0; while [ $i -lt 50000 ]; do echo "line $i of a tight print loop"; i=$((i+1)); done`], 50000),
  ];
  const count = 3000;
  const node = process.execPath;
  const app = [node, '-e', LATENCY_APP, String(count)];
  // interleaved runs, pooled: the machine's own noise falls on both alike
  const direct: number[] = [];
  const via: number[] = [];
  let inFile = 0;
  const rounds = 3;
  for (let i = 0; i < rounds; i++) {
    direct.push(...await latency(app));
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'capture-cost-')), '.stdout-app');
    via.push(...await latency(wrapped(app, dir)));
    inFile += fs.readFileSync(path.join(dir, 'stdout.0.log'), 'utf8').split('\n').length - 1;
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  const us = (x: number) => `${Math.round(x)} µs`;
  console.log(`busybox: ${spawnSync(B, [], { encoding: 'utf8' }).stdout.split('\n')[0]}; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`);
  console.log('\n| app | lines | lines/s direct | lines/s captured | time captured / direct |\n|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`\n| ${rounds} x ${count} lines, one per ms | p50 | p99 | max |\n|---|---|---|---|`);
  console.log(`| direct | ${us(quantile(direct, 0.5))} | ${us(quantile(direct, 0.99))} | ${us(Math.max(...direct))} |`);
  console.log(`| captured | ${us(quantile(via, 0.5))} | ${us(quantile(via, 0.99))} | ${us(Math.max(...via))} |`);
  console.log(`| added | ${us(quantile(via, 0.5) - quantile(direct, 0.5))} | ${us(quantile(via, 0.99) - quantile(direct, 0.99))} | |`);
  console.log(`\nlines in the capture files: ${inFile} of ${rounds * count}`);
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
