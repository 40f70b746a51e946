/**
 * The one "does this Service select this pod" (src/facts/services.ts), read by the app-wide
 * checks (src/engine/around.ts, src/facts/known-bugs.ts) and WithEnvoy's Service scan.
 */
import * as fs from 'fs';
import * as path from 'path';
import { selectorSelects, serviceSelects } from '../src/facts/services';

const service = (selector: unknown, namespace?: string): any => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: 's', ...(namespace ? { namespace } : {}) }, spec: { selector, ports: [{ port: 80 }] },
});

test('every key of the selector, with the same value; extra pod labels do not matter', () => {
  expect(selectorSelects({ app: 'web' }, { app: 'web', tier: 'front' })).toBe(true);
  expect(selectorSelects({ app: 'web', tier: 'front' }, { app: 'web' })).toBe(false);
  expect(selectorSelects({ app: 'web' }, { app: 'api' })).toBe(false);
  expect(selectorSelects({ app: 'web' }, undefined)).toBe(false);
});

test('no selector, an empty one or one that is no object selects nothing (endpoints managed by hand)', () => {
  for (const s of [undefined, null, {}, 'app=web', 42]) expect(selectorSelects(s, { app: 'web' })).toBe(false);
});

test('a Service selects only the pods of its own namespace (none given: the default one)', () => {
  expect(serviceSelects(service({ app: 'web' }), undefined, { app: 'web' })).toBe(true);
  expect(serviceSelects(service({ app: 'web' }, 'shop'), 'shop', { app: 'web' })).toBe(true);
  expect(serviceSelects(service({ app: 'web' }, 'shop'), undefined, { app: 'web' })).toBe(false);
  expect(serviceSelects(service({ app: 'web' }), 'shop', { app: 'web' })).toBe(false);
});

test('no other file of src/ matches a Service selector against pod labels itself', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {walk(p);} else if (p.endsWith('.ts') && !p.endsWith(path.join('facts', 'services.ts')) && /spec\??\.selector/.test(fs.readFileSync(p, 'utf8'))) {
        if (/labels\??\.?\[k\] === (v|selector\[k\])/.test(fs.readFileSync(p, 'utf8'))) offenders.push(path.relative(path.join(__dirname, '..'), p));
      }
    }
  };
  walk(path.join(__dirname, '..', 'src'));
  expect(offenders).toEqual([]);
});
