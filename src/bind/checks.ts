/**
 * Every input check of the library, in one module: the constructs and the factories
 * (`LogOutput.*`, `LogAgent.*`) call these where the value is given. `who` starts each message:
 * a construct's description (`WithEnvoy 'chart/envoy'`) or a factory (`LogOutput.loki()`).
 * @internal
 */
import { Duration, Size, SizeRoundingBehavior } from 'cdk8s';
import { checkManifestList, checkManifestString } from './manifest-values';
import { Where } from '../private/errors';
import { setOwn } from '../private/order';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A DNS-1123 label (kubernetes apimachinery validation.IsDNS1123Label). */
export function checkDnsLabel(who: Where, prop: string, value: string, maxLength = 63): void {
  checkString(who, prop, value, "'log-agent'");
  if (value.length > maxLength || !DNS_LABEL.test(value)) {
    const long = maxLength < 63 && value.length > maxLength && DNS_LABEL.test(value);
    throw who.error(
      long
        ? `${prop} '${value}' is ${value.length} characters; names derived from it (volumes '<${prop}>-client-ca' and the like) must fit in 63`
        : `${prop} '${value}' is not a valid DNS-1123 label`,
      value,
      `${long ? 'so ' : ''}use at most ${maxLength} lower-case letters, digits and '-', starting and ending with a letter or digit (e.g. 'log-agent')`,
      long ? ', ' : '; ',
    );
  }
  checkManifestString(who, prop, value); // '0o17' is a DNS label that the API server reads as 15
}

/** A TCP port number; `note` is added to the message. */
export function checkPort(who: Where, prop: string, value: number, note?: string): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw who.error(`${prop} ${describeValue(value)} is not a valid port`, value, `use an integer from 1 to 65535${note ? ` ${note}` : ''}`);
  }
}

/**
 * A port name (kubernetes apimachinery validation.IsValidPortName, IANA_SVC_NAME): at most 15
 * characters, lower-case letters, digits and '-', at least one letter, no '--', not starting or
 * ending with '-'.
 */
export function isPortName(name: unknown): boolean {
  return typeof name === 'string' && /^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]+(-[a-z0-9]+)*$/.test(name);
}

/**
 * A port an agent listens on: it runs as non-root without NET_BIND_SERVICE, so it cannot bind
 * below 1024 (unless the runtime lowers `ip_unprivileged_port_start`, which containerd 1.x does
 * not do by default). `hint` ends the message.
 */
export function checkListenPort(who: Where, prop: string, value: number, hint = 'use a port from 1024 up'): void {
  checkPort(who, prop, value);
  if (value < 1024) {
    throw who.error(`${prop} ${value} is below 1024, which the agent (non-root, without NET_BIND_SERVICE) cannot bind`, value, hint);
  }
}

/** An integer in [min, max]: `${prop} ${value} is not ${what}; use an integer from min to max (${example}).` */
export function checkInteger(who: Where, prop: string, value: number, min: number, max: number, what: string, example: string): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw who.error(`${prop} ${value} is not ${what}`, value, `use an integer from ${min} to ${max} (${example})`);
  }
}

/**
 * A whole, non-negative number of seconds (or `fallback` when unset), at most `max` (by default
 * the int32 range of the API's seconds fields: probe periods and thresholds are int32, and a
 * larger value would be written as `1e+21` or in Envoy's config as `"1e+21s"`).
 */
export function durationSeconds(who: Where, prop: string, d: Duration | undefined, fallback: number, max: number = INT32_MAX): number {
  if (d === undefined) return fallback;
  if (d === null || typeof (d as any).toSeconds !== 'function') {
    throw who.error(`${prop} ${describeValue(d)} is not a Duration`, d, 'use e.g. Duration.seconds(10)');
  }
  const s = d.toSeconds({ integral: false });
  if (!Number.isFinite(s) || s < 0 || !Number.isInteger(s)) {
    throw who.error(`${prop} ${s}s is not a whole, non-negative number of seconds`, d, 'use e.g. Duration.seconds(10)');
  }
  if (s > max) {
    throw who.error(`${prop} ${s}s is above ${max}s, the most the field it is written to can hold`, d, 'use e.g. Duration.seconds(10)');
  }
  return s;
}

/** `durationSeconds` for a time that must be at least 1 second; `why` ends the message. */
export function positiveSeconds(who: Where, prop: string, d: Duration | undefined, fallback: number, why?: string): number {
  const s = durationSeconds(who, prop, d, fallback);
  if (s < 1) throw who.error(`${prop} must be at least 1 second (got ${s}s)`, d, why ?? 'use e.g. Duration.seconds(1)');
  return s;
}

/**
 * An image reference as the kubelet takes it: not empty, no white space (the reference grammar
 * of distribution/reference has none). `example` is the default image.
 */
export function checkImage(who: Where, prop: string, image: string, example: string): void {
  // whether an image passes depends on its text alone: most sidecars of an app share one
  if (typeof image === 'string' && PASSED_IMAGES.has(image)) return;
  checkImageText(who, prop, image, example);
  if (PASSED_IMAGES.size >= 256) PASSED_IMAGES.clear();
  PASSED_IMAGES.add(image);
}

/** Images `checkImage` passed. */
const PASSED_IMAGES = new Set<string>();

function checkImageText(who: Where, prop: string, image: string, example: string): void {
  checkString(who, prop, image, `'${example}'`);
  if (image.trim() === '' || /\s/.test(image)) {
    throw who.error(`${prop} '${image}' is not an image reference`, image, `use e.g. '${example}'`);
  }
  checkManifestString(who, prop, image);
  const m = IMAGE_REFERENCE.exec(image);
  if (!m) {
    throw who.error(
      `${prop} ${describeValue(image)} is not an image reference (the grammar of distribution/reference: ` +
      "[registry/]repository[:tag][@digest], the repository in lower-case letters, digits and '.', '_', '-' separators)",
      image, `use e.g. '${example}'`,
    );
  }
  if (m[1].length > IMAGE_NAME_MAX) {
    throw who.error(`${prop} is ${m[1].length} characters before its tag, more than the ${IMAGE_NAME_MAX} an image name may have`, image, `use e.g. '${example}'`);
  }
}

// distribution/reference regexp.go (github.com/distribution/reference, as stored:
// referencePat = anchored(capture(namePat), optional(':', capture(tag)), optional('@', capture(digestPat))))
// and reference.go NameTotalLengthMax = 255.
const IMAGE_DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const IMAGE_DOMAIN = `(?:${IMAGE_DOMAIN_COMPONENT}(?:\\.${IMAGE_DOMAIN_COMPONENT})*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?`;
const IMAGE_PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const IMAGE_NAME = `(?:${IMAGE_DOMAIN}/)?${IMAGE_PATH_COMPONENT}(?:/${IMAGE_PATH_COMPONENT})*`;
const IMAGE_TAG = '[\\w][\\w.-]{0,127}';
const IMAGE_DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}';
const IMAGE_REFERENCE = new RegExp(`^(${IMAGE_NAME})(?::(${IMAGE_TAG}))?(?:@(${IMAGE_DIGEST}))?$`);
const IMAGE_NAME_MAX = 255;

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * A bare host: an RFC 1123 DNS name (one trailing '.' allowed when `allowTrailingDot`) or an IPv4
 * address; IPv6 in brackets when `allowIpv6`. No scheme, port, path or white space.
 */
export function isHost(host: string, options: { allowTrailingDot?: boolean; allowIpv6?: boolean } = {}): boolean {
  if (typeof host !== 'string') return false;
  if (options.allowIpv6 && /^\[[0-9A-Fa-f:.]+\]$/.test(host)) return true;
  const name = options.allowTrailingDot && host.endsWith('.') ? host.slice(0, -1) : host;
  if (IPV4.test(name)) return true;
  return HOST_NAME.test(name) && !readAsIpv4(name);
}

/**
 * Whether a C resolver reads `host` as an IPv4 address though it is not one in dotted-quad form:
 * glibc's and musl's `getaddrinfo` try `inet_aton` first, which takes 1 to 4 parts, each decimal,
 * octal (leading 0) or hex (0x): '012' is 0.0.0.10, '0x1F' 0.0.0.31, '10.1' 10.0.0.1,
 * '4294967295' 255.255.255.255, '127.1' 127.0.0.1. Such a host is ambiguous (a DNS name to
 * the library, an address to the agent), so it is refused.
 */
export function readAsIpv4(host: string): boolean {
  const parts = host.split('.');
  return parts.length >= 1 && parts.length <= 4 && parts.every(p => /^(?:0[xX][0-9A-Fa-f]*|[0-9]+)$/.test(p)) && !IPV4.test(host);
}

/**
 * The IPv4 address a C resolver reads in a host that `readAsIpv4` finds ambiguous ('127.1' is
 * '127.0.0.1', '0x7f000001' too), or undefined where inet_aton refuses it (an octal part with an 8
 * or 9, a part out of range). inet_aton(3): 1 to 4 parts, each decimal, octal (leading 0) or hex
 * ('0x'); the last part fills the remaining bytes (a: 32 bits, a.b: 8.24, a.b.c: 8.8.16).
 */
export function inetAtonAddress(host: string): string | undefined {
  if (!readAsIpv4(host)) return undefined;
  const parts = host.split('.').map(p => (/^0[xX]/.test(p) ? (p.length > 2 ? parseInt(p.slice(2), 16) : 0)
    : /^0\d/.test(p) ? (/^[0-7]+$/.test(p) ? parseInt(p, 8) : NaN) : Number(p)));
  if (parts.some(n => !Number.isSafeInteger(n))) return undefined;
  const last = parts[parts.length - 1];
  const head = parts.slice(0, -1);
  if (head.some(n => n > 255) || last >= 2 ** (8 * (4 - head.length))) return undefined;
  const value = head.reduce((acc, n, i) => acc + n * 2 ** (8 * (3 - i)), 0) + last;
  return [24, 16, 8, 0].map(shift => Math.floor(value / 2 ** shift) % 256).join('.');
}

/**
 * Whether `host` is an IPv6 address written without brackets ('::1', '0:0:0:0:0:0:0:1'): a
 * host:port cannot carry it (Go's net.SplitHostPort: 'too many colons'), and the props that take
 * a bare host read the colon as the start of a port.
 */
export function isBareIpv6(host: string): boolean {
  if (typeof host !== 'string' || !host.includes(':') || /[[\]]/.test(host)) return false;
  try {
    return new URL(`http://[${host}]/`).hostname !== '';
  } catch {
    return false;
  }
}

/**
 * How a host that is not what it looks like reads, for the messages of the host props: an
 * inet_aton short form ('127.1' is 127.0.0.1 to a C resolver), an IPv6 address, each with
 * "this pod's loopback" where it is one; undefined for an ordinary DNS name or address.
 */
export function hostReading(host: string): string | undefined {
  const loopback = (h: string) => (isLoopbackHost(h) ? ", this pod's loopback" : '');
  const v4 = inetAtonAddress(host);
  if (v4 !== undefined) return `a C resolver (inet_aton) reads '${host}' as ${v4}${loopback(v4)}`;
  if (isBareIpv6(host)) return `'${host}' is an IPv6 address${loopback(`[${host}]`)}`;
  if (/^\[.*\]$/.test(host) && isBareIpv6(host.slice(1, -1))) return `'${host}' is an IPv6 address${loopback(host)}`;
  return undefined;
}

/** The rule every host prop states in its message. */
export const HOST_RULE =
  "give the bare host (no scheme, port or path): a DNS name or IPv4 address, e.g. 'logs.example.com' (a name of digits and " +
  "'0x' parts only, such as '012', '0x1F' or '10.1', is refused: the agents' C resolver reads it as an IPv4 address)";

/**
 * Whether `host` (a DNS name, an IPv4 address or an IPv6 address in brackets) is this pod's own
 * loopback: 'localhost' and '*.localhost' in any case, 127.0.0.0/8, 0.0.0.0 (a connect to it
 * reaches the local host on Linux), [::1], [::] and the IPv4-mapped forms of those
 * ([::ffff:127.0.0.1]); read through the WHATWG URL parser, which also canonicalises IPv6 and
 * the inet_aton forms of IPv4 ('127.1').
 */
export function isLoopbackHost(host: string): boolean {
  // (a URL parse per call: every WithTracer asks for its endpoint, most apps name one or two)
  let answer = LOOPBACK_ANSWERS.get(host);
  if (answer === undefined) {
    answer = loopbackHost(host);
    if (LOOPBACK_ANSWERS.size >= 256) LOOPBACK_ANSWERS.clear();
    LOOPBACK_ANSWERS.set(host, answer);
  }
  return answer;
}

const LOOPBACK_ANSWERS = new Map<string, boolean>();

function loopbackHost(host: string): boolean {
  let name: string;
  try {
    name = new URL(`http://${host}/`).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (/^127\.\d+\.\d+\.\d+$/.test(name) || name === '0.0.0.0') return true;
  if (name === '[::1]' || name === '[::]') return true;
  // IPv4-mapped: [::ffff:7f00:1] (127.0.0.1), [::ffff:0:0] (0.0.0.0)
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(name);
  if (mapped) {
    const high = parseInt(mapped[1], 16);
    return Math.floor(high / 256) === 127 || (high === 0 && parseInt(mapped[2], 16) === 0);
  }
  return false;
}

const SECRET_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// IsConfigMapKey (apimachinery pkg/util/validation/validation.go): [-._a-zA-Z0-9]+, at most 253,
// and hasChDirPrefix: not '.', not '..', not starting with '..' (the kubelet's '..data' entry).
const SECRET_KEY = /^(?!\.\.?$)(?!\.\.)[-._a-zA-Z0-9]{1,253}$/;

/** A Secret's name: a DNS-1123 subdomain (kubernetes ValidateSecretName). */
export function isSecretName(name: string): boolean {
  return typeof name === 'string' && SECRET_NAME.test(name);
}

/** A key of a Secret's data (kubernetes apimachinery validation.IsConfigMapKey). */
export function isSecretKey(key: string): boolean {
  return typeof key === 'string' && SECRET_KEY.test(key);
}

/** A Secret name prop. */
export function checkSecretName(who: Where, prop: string, value: string): void {
  if (!isSecretName(value)) {
    throw who.error(`${prop} '${value}' is not a Secret name`, value,
      "use the name of a Secret in the workload's namespace (lower-case letters, digits, '-' and '.', e.g. 'web-tls')");
  }
  checkManifestString(who, prop, value);
}

/** An object name (a ConfigMap's, a policy's): a DNS-1123 subdomain (apimachinery validation.IsDNS1123Subdomain). */
export function checkObjectName(who: Where, prop: string, value: string, what: string, example: string): void {
  if (!isSecretName(value)) {
    throw who.error(`${prop} '${value}' is not ${what} (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')`, value, `e.g. '${example}'`, ', ');
  }
  checkManifestString(who, prop, value);
}

/** A key of a ConfigMap's data, which becomes a file name (apimachinery validation.IsConfigMapKey). */
export function checkConfigMapKey(who: Where, prop: string, key: string, example: string): void {
  if (!isSecretKey(key)) {
    throw who.error(`${prop} '${key}' is not a ConfigMap key (letters, digits, '-', '_', '.')`, key, `use a file name such as '${example}'`);
  }
  // A key the API server takes but cdk8s cannot write in the ConfigMap's data: its writer
  // (cdk8s 2.70 lib/_util.js sanitizeValue) tells a plain object by `obj.constructor.name`, which
  // an own key 'constructor' replaces, and fails at synthesis naming no prop ("can't render
  // non-simple object of type 'undefined'"). ('__proto__' is refused by ownEntries.)
  if (key === 'constructor') {
    throw who.error(
      `${prop} 'constructor' cannot be written by cdk8s in a ConfigMap's data (its YAML writer reads the key as the ` +
      "object's constructor and fails at synthesis)",
      key, `rename the file, e.g. 'constructor.conf' or '${example}'`,
    );
  }
  checkManifestString(who, prop, key); // '0O17' is a key that the API server reads as 15
}

/**
 * An env var name as the API server takes it (kubernetes pkg/apis/core/validation/validation.go
 * validateEnvVarName -> apimachinery validation.IsEnvVarName).
 */
export function checkEnvName(who: Where, prop: string, name: string): void {
  if (typeof name !== 'string' || !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name)) {
    throw who.error(`${prop} '${name}' is not an env var name (letters, digits, '_', '-', '.', not starting with a digit)`, name, "e.g. 'DB_HOST'", ', ');
  }
  checkManifestString(who, prop, name); // '-0o7' is a name that the API server reads as -7
}

/** The path of an HTTP request a probe or hook makes: starts with '/', no white space (it goes into the request line). */
export function checkHttpPath(who: Where, prop: string, path: string, example: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || /\s/.test(path)) {
    throw who.error(`${prop} '${path}' must start with '/' and hold no white space`, path, `e.g. '${example}'`, ', ');
  }
  checkManifestString(who, prop, path);
}

/** A mount path: absolute, without ':' (validation.go validateVolumeMounts), '..' or white space. */
export function checkMountPath(who: Where, prop: string, path: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes(':') || /\s/.test(path) || path.split('/').includes('..')) {
    throw who.error(`${prop} '${path}' must be an absolute path without ':', '..' or white space`, path, "e.g. '/var/run/proxy'", ', ');
  }
  // '/', '//', '/./': a volume over the container's whole root filesystem hides its image
  if (path.split('/').every(part => part === '' || part === '.')) {
    throw who.error(`${prop} '${path}' is the container's root directory, and a volume there hides the whole image`, path, "use a directory of its own, e.g. '/var/run/proxy'");
  }
  checkManifestString(who, prop, path);
}

/** A list of strings (a container's command or args), when given. */
export function checkStringList(who: Where, prop: string, list: unknown): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    throw who.error(`${prop} ${describeValue(list)} is not a list of strings`, list, "give an array, e.g. ['--port', '5432']");
  }
  // Index by index, not with .some()/.every(), which skip holes: ['--a', , '--b'] is written
  // `[--a, null, --b]`, and Go's decoder makes the null an empty argument the user never gave.
  for (let i = 0; i < list.length; i++) {
    if (!(i in list)) {
      throw who.error(`${prop}[${i}] is a hole (an empty slot, e.g. two commas in a row)`, list, "remove it or give the argument, e.g. ['--port', '5432']");
    }
    if (typeof list[i] !== 'string') {
      throw who.error(`${prop}[${i}] ${describeValue(list[i])} is not a string`, list[i], "quote numbers, e.g. ['--port', '5432']");
    }
  }
  checkManifestList(who, prop, list as string[] | undefined);
}

/** An emptyDir's size limit in whole MiB (rounded down), at least 1; `fallback` when unset. */
export function sizeLimitMiB(who: Where, prop: string, size: Size | undefined, fallback: number, example: string): number {
  if (size !== undefined) checkSize(who, prop, size, example);
  const mib = size === undefined ? fallback : size.toMebibytes({ rounding: SizeRoundingBehavior.FLOOR });
  if (!(mib >= 1)) throw who.error(`${prop} must be at least 1 MiB (got ${mib} MiB)`, size, `e.g. ${example}`, ', ');
  return mib;
}

/** The largest size a quantity field takes here, in MiB: 1 PiB (a finite number, written in full). */
const MAX_MIB = 1024 * 1024 * 1024;

/** A Size prop: a cdk8s Size of a finite, non-negative amount of at most 1 PiB (`Size.mebibytes(Infinity)` would be written `InfinityMi`). */
export function checkSize(who: Where, prop: string, size: unknown, example: string): void {
  if (size === null || typeof size !== 'object' || typeof (size as any).toKibibytes !== 'function') {
    throw who.error(`${prop} ${describeValue(size)} is not a Size`, size, `use e.g. ${example}`);
  }
  const kib = (size as Size).toKibibytes({ rounding: SizeRoundingBehavior.FLOOR });
  if (!Number.isFinite(kib) || kib < 0 || kib / 1024 > MAX_MIB) {
    throw who.error(`${prop} ${kib} KiB is not a size from 0 to 1 PiB`, size, `use e.g. ${example}`);
  }
}

/** A CPU ('500m', '1', '0.5') or memory ('64Mi') quantity as a number, for comparisons; NaN otherwise. */
export function quantity(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m|Mi)?$/.exec(q);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'm' ? 1 : m[2] === 'Mi' ? 1 : 1000);
}

// ------------------------------------------------------------------------------------------
// Types and shapes, for JavaScript callers (jsii checks the other languages' types itself):
// every prop is checked for its type where it is given, so a malformed prop gives a message
// that names the construct, the value and the fix, never a raw TypeError later.

/**
 * A value as messages show it, never throwing: a string JSON-quoted (so invisible characters
 * show as escapes), a number as written, a class instance by its class (`a Lazy`), a plain
 * object or array as JSON (cut at 80 characters).
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && proto !== Array.prototype) {
    const name = proto?.constructor?.name;
    return name ? `a ${name}` : 'an object';
  }
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? 'an array' : 'an object';
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** An object whose prototype is Object.prototype (or none): `{ ... }` as written, not a class instance or an array. */
export function isPlainObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A props or options object: any object but an array (a TypeScript caller may build its props
 * with a class; jsii hands structs over as plain objects).
 */
export function isPropsObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A boolean prop, when given (`'false'`, a string, is truthy in JavaScript and would count as true). */
export function checkBoolean(who: Where, prop: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw who.error(`${prop} ${describeValue(value)} is not a boolean`, value, 'use true or false (without quotes)');
  }
}

/**
 * A string prop, when given. A Lazy or another token is refused: the library reads every value
 * when the construct is made (to check it and to derive names from it), before a token resolves.
 */
export function checkString(who: Where, prop: string, value: unknown, example: string): void {
  if (value !== undefined && typeof value !== 'string') {
    // a cdk8s Lazy has produce(), other tokens resolve()
    const token = value !== null && typeof value === 'object' && (typeof (value as any).produce === 'function' || typeof (value as any).resolve === 'function');
    throw who.error(
      `${prop} ${describeValue(value)} is not a string`,
      value,
      (token ? 'a Lazy or token cannot be read when the construct is made; give the value itself' : 'give a string') + `, e.g. ${example}`,
    );
  }
}

/** A number prop, when given: a finite number (NaN would be written as `.nan`). */
export function checkNumber(who: Where, prop: string, value: unknown, example: string): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
    throw who.error(`${prop} ${describeValue(value)} is not a finite number`, value, `give a number, e.g. ${example}`);
  }
}

/**
 * A map prop (`{ [name: string]: T }`) as its own entries, in the order given (Object.entries:
 * own enumerable keys only, never Object.prototype's such as 'constructor'). A key '__proto__'
 * is refused where the keys stay keys of a map (`as: 'map'`, the default): JavaScript objects, and
 * cdk8s' own writer (which copies every map by assignment), would drop it silently. A map that
 * becomes a list of `name:` entries (`as: 'list'`: a container's env) keeps it: `- name: __proto__`
 * is an ordinary value, which the API server's reader reads back intact.
 */
export function ownEntries<T>(who: Where, prop: string, value: { readonly [name: string]: T } | undefined, example: string,
  as: 'map' | 'list' = 'map'): Array<[string, T]> {
  if (value === undefined) return [];
  if (!isPlainObject(value)) {
    throw who.error(`${prop} ${describeValue(value)} is not a map of names to values`, value, `give a plain object, e.g. ${example}`);
  }
  if (as === 'map' && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
    throw who.error(
      `${prop} has a key "__proto__", which JavaScript objects and cdk8s' own YAML writer drop silently (it sets the prototype instead)`,
      value, 'rename the key',
    );
  }
  return Object.entries(value);
}

/**
 * A list prop, when given: an array without holes, `null` or `undefined` entries (each would be
 * written as `null` or read as a missing object). Returns a copy.
 */
export function listOf<T>(who: Where, prop: string, value: readonly T[] | undefined, example: string): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw who.error(`${prop} ${describeValue(value)} is not a list`, value, `give an array, e.g. ${example}`);
  }
  for (let i = 0; i < value.length; i++) {
    if (!(i in value) || value[i] === null || value[i] === undefined) {
      throw who.error(`${prop}[${i}] is ${i in value ? String(value[i]) : 'a hole (an empty slot)'}`, value, `remove the empty entry, e.g. ${example}`);
    }
  }
  return [...value];
}

/** An object made by one of the library's factories (`instanceof`), when given. */
export function checkMadeBy(who: Where, prop: string, value: unknown, cls: Function, factories: string): void {
  if (value !== undefined && !(value instanceof cls)) {
    throw who.error(`${prop} ${describeValue(value)} was not made by ${factories}`, value, 'make it with one of them');
  }
}

/**
 * An options or props object read once, property by property, into a plain copy (`copyData`
 * below it): each factory and construct works on the copy only, so a getter that returns one
 * value when checked and another when used (or a caller that changes the object in between)
 * cannot put an unchecked value into a config file. Own enumerable properties and the getters of
 * a class instance's prototypes (a TypeScript caller may build its options with a class) are read
 * once each; methods are left out. Anything but an object is returned as it is.
 */
export function snapshot<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  const keys: string[] = Object.keys(value as object);
  for (let o = Object.getPrototypeOf(value); o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if (k !== 'constructor' && typeof Object.getOwnPropertyDescriptor(o, k)?.get === 'function' && !keys.includes(k)) keys.push(k);
    }
  }
  for (const k of keys) {
    const v = (value as any)[k];
    if (typeof v !== 'function') setOwn(out, k, copyData(v));
  }
  return out as T;
}

/** The largest value of an int32 field of the Kubernetes API (probe thresholds, seconds fields). */
export const INT32_MAX = 2147483647;

/**
 * A deep copy of plain data (plain objects and arrays, their own keys only, `__proto__` kept as
 * an own key so that `ownEntries` can refuse it); everything else is kept as it is: primitives and
 * class instances (a Duration, a Size, a construct, a SidecarCheck), which the library only reads.
 * Props are copied with it at construction, so a props object changed afterwards does not change
 * a construct made earlier.
 */
export function copyData<T>(value: T): T {
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = copyData(value[i]);
    return out as unknown as T;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as object)) setOwn(out, k, copyData(v));
    return out as T;
  }
  return value;
}
