/**
 * The fast question `fits()` (src/engine/container-shape.ts) answers "no problem" only where the
 * message walk `check()` finds none: GIVEN a container whose field of the wrong JSON type is an own
 * property that a for-in walk does not list (not enumerable), WHEN containerShapeErrors reads it,
 * THEN it reports the field as the message walk does (as before the fast path), at the top level,
 * in a nested struct and in a struct of a list.
 */
import { containerShapeErrors } from '../src/engine/container-shape';

const hidden = (o: any, key: string, value: unknown) => {
  Object.defineProperty(o, key, { value, enumerable: false, configurable: true, writable: true });
  return o;
};
const errors = (container: any) => containerShapeErrors('W', 'containers', 0, container);

describe('fits() answers as check() does', () => {
  test('a non-enumerable own field of the container', () => {
    expect(errors(hidden({ name: 'a' }, 'image', 5))).toEqual([
      expect.stringContaining("spec.containers[0] ('a'): image is 5, not a string"),
    ]);
  });

  test('a non-enumerable own field of a nested struct', () => {
    expect(errors({ name: 'a', securityContext: hidden({}, 'runAsUser', 'x') })).toEqual([
      expect.stringContaining('securityContext.runAsUser is "x", not a whole number'),
    ]);
  });

  test('a non-enumerable own field of a struct in a list, next to a field that fits', () => {
    expect(errors({ name: 'a', image: 'x', ports: [hidden({ name: 'http' }, 'containerPort', '80')] })).toEqual([
      expect.stringContaining('ports[0].containerPort is "80", not a whole number'),
    ]);
  });

  test('what check() does not read stays unread: inherited fields, a JSON __proto__ key', () => {
    const inherited = Object.create({ image: 5 });
    inherited.name = 'a';
    expect(errors(inherited)).toEqual([]);
    expect(errors(JSON.parse('{"name":"a","securityContext":{"__proto__":{"runAsUser":"x"}}}'))).toEqual([]);
  });
});
