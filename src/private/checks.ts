/**
 * Every input check of the library, in one module: the constructs and the factories
 * (`LogOutput.*`, `LogAgent.*`) call these where the value is given. `who` starts each message:
 * a construct's description (`WithEnvoy 'chart/envoy'`) or a factory (`LogAgent.fluentBit()`).
 * @internal
 */
import { Duration, Size, SizeRoundingBehavior } from 'cdk8s';
import { checkManifestList, checkManifestString } from './values';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A DNS-1123 label (kubernetes apimachinery validation.IsDNS1123Label). */
export function checkDnsLabel(who: string, prop: string, value: string, maxLength = 63): void {
  if (value.length > maxLength || !DNS_LABEL.test(value)) {
    const why = maxLength < 63 && value.length > maxLength && DNS_LABEL.test(value)
      ? ` is ${value.length} characters; names derived from it (volumes '<${prop}>-client-ca' and the like) must fit in 63, so`
      : ' is not a valid DNS-1123 label;';
    throw new Error(
      `${who}: ${prop} '${value}'${why} use at most ${maxLength} lower-case letters, digits ` +
      "and '-', starting and ending with a letter or digit (e.g. 'log-agent').",
    );
  }
  checkManifestString(who, prop, value); // '0o17' is a DNS label that the API server reads as 15
}

/** A TCP port number. */
export function checkPort(who: string, prop: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${who}: ${prop} ${value} is not a valid port; use an integer from 1 to 65535.`);
  }
}

/**
 * A port an agent listens on: it runs as non-root without NET_BIND_SERVICE, so it cannot bind
 * below 1024 (unless the runtime lowers `ip_unprivileged_port_start`, which containerd 1.x does
 * not do by default). `hint` ends the message.
 */
export function checkListenPort(who: string, prop: string, value: number, hint = 'use a port from 1024 up'): void {
  checkPort(who, prop, value);
  if (value < 1024) {
    throw new Error(`${who}: ${prop} ${value} is below 1024, which the agent (non-root, without NET_BIND_SERVICE) cannot bind; ${hint}.`);
  }
}

/** An integer in [min, max]: `${prop} ${value} is not ${what}; use an integer from min to max (${example}).` */
export function checkInteger(who: string, prop: string, value: number, min: number, max: number, what: string, example: string): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${who}: ${prop} ${value} is not ${what}; use an integer from ${min} to ${max} (${example}).`);
  }
}

/** A whole, non-negative number of seconds (or `fallback` when unset). */
export function durationSeconds(who: string, prop: string, d: Duration | undefined, fallback: number): number {
  if (d === undefined) return fallback;
  const s = d.toSeconds({ integral: false });
  if (!Number.isFinite(s) || s < 0 || !Number.isInteger(s)) {
    throw new Error(`${who}: ${prop} ${s}s is not a whole, non-negative number of seconds; use e.g. Duration.seconds(10).`);
  }
  return s;
}

/** `durationSeconds` for a time that must be at least 1 second; `why` ends the message. */
export function positiveSeconds(who: string, prop: string, d: Duration | undefined, fallback: number, why?: string): number {
  const s = durationSeconds(who, prop, d, fallback);
  if (s < 1) throw new Error(`${who}: ${prop} must be at least 1 second (got ${s}s)${why ? `; ${why}` : ''}.`);
  return s;
}

/**
 * An image reference as the kubelet takes it: not empty, no white space (the reference grammar
 * of distribution/reference has none). `example` is the default image.
 */
export function checkImage(who: string, prop: string, image: string, example: string): void {
  if (typeof image !== 'string' || image.trim() === '' || /\s/.test(image)) {
    throw new Error(`${who}: ${prop} '${image}' is not an image reference; use e.g. '${example}'.`);
  }
  checkManifestString(who, prop, image);
}

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
  return IPV4.test(name) || HOST_NAME.test(name);
}

/** The rule every host prop states in its message. */
export const HOST_RULE = "give the bare host (no scheme, port or path): a DNS name or IPv4 address, e.g. 'logs.example.com'";

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
export function checkSecretName(who: string, prop: string, value: string): void {
  if (!isSecretName(value)) {
    throw new Error(
      `${who}: ${prop} '${value}' is not a Secret name; use the name of a Secret in the workload's namespace ` +
      "(lower-case letters, digits, '-' and '.', e.g. 'web-tls').",
    );
  }
  checkManifestString(who, prop, value);
}

/** An object name (a ConfigMap's, a policy's): a DNS-1123 subdomain (apimachinery validation.IsDNS1123Subdomain). */
export function checkObjectName(who: string, prop: string, value: string, what: string, example: string): void {
  if (!isSecretName(value)) {
    throw new Error(`${who}: ${prop} '${value}' is not ${what} (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'), e.g. '${example}'.`);
  }
  checkManifestString(who, prop, value);
}

/** A key of a ConfigMap's data, which becomes a file name (apimachinery validation.IsConfigMapKey). */
export function checkConfigMapKey(who: string, prop: string, key: string, example: string): void {
  if (!isSecretKey(key)) {
    throw new Error(`${who}: ${prop} '${key}' is not a ConfigMap key (letters, digits, '-', '_', '.'); use a file name such as '${example}'.`);
  }
  checkManifestString(who, prop, key); // '0O17' is a key that the API server reads as 15
}

/**
 * An env var name as the API server takes it (kubernetes pkg/apis/core/validation/validation.go
 * validateEnvVarName -> apimachinery validation.IsEnvVarName).
 */
export function checkEnvName(who: string, prop: string, name: string): void {
  if (typeof name !== 'string' || !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name)) {
    throw new Error(`${who}: ${prop} '${name}' is not an env var name (letters, digits, '_', '-', '.', not starting with a digit), e.g. 'DB_HOST'.`);
  }
  checkManifestString(who, prop, name); // '-0o7' is a name that the API server reads as -7
}

/** The path of an HTTP request a probe or hook makes: starts with '/', no white space (it goes into the request line). */
export function checkHttpPath(who: string, prop: string, path: string, example: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || /\s/.test(path)) {
    throw new Error(`${who}: ${prop} '${path}' must start with '/' and hold no white space, e.g. '${example}'.`);
  }
  checkManifestString(who, prop, path);
}

/** A mount path: absolute, without ':' (validation.go validateVolumeMounts), '..' or white space. */
export function checkMountPath(who: string, prop: string, path: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes(':') || /\s/.test(path) || path.split('/').includes('..')) {
    throw new Error(`${who}: ${prop} '${path}' must be an absolute path without ':', '..' or white space, e.g. '/var/run/proxy'.`);
  }
  checkManifestString(who, prop, path);
}

/** A list of strings (a container's command or args), when given. */
export function checkStringList(who: string, prop: string, list: unknown): void {
  if (list !== undefined && (!Array.isArray(list) || list.some(x => typeof x !== 'string'))) {
    throw new Error(`${who}: ${prop} must be a list of strings (got ${JSON.stringify(list)}); quote numbers, e.g. ['--port', '5432'].`);
  }
  checkManifestList(who, prop, list as string[] | undefined);
}

/** An emptyDir's size limit in whole MiB (rounded down), at least 1; `fallback` when unset. */
export function sizeLimitMiB(who: string, prop: string, size: Size | undefined, fallback: number, example: string): number {
  const mib = size === undefined ? fallback : size.toMebibytes({ rounding: SizeRoundingBehavior.FLOOR });
  if (!(mib >= 1)) throw new Error(`${who}: ${prop} must be at least 1 MiB (got ${mib} MiB), e.g. ${example}.`);
  return mib;
}

/** A CPU ('500m', '1', '0.5') or memory ('64Mi') quantity as a number, for comparisons; NaN otherwise. */
export function quantity(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m|Mi)?$/.exec(q);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'm' ? 1 : m[2] === 'Mi' ? 1 : 1000);
}
