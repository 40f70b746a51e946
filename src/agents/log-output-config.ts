/**
 * The log output as the agents' renderers see it: plain data made by `LogOutput` (src/log-output.ts)
 * from the user's options, after its checks. Below the constructs so that the renderers never
 * import a construct file.
 */

/** A secret-backed value, as the agents see it. @internal */
export interface SecretRef {
  readonly secretName: string;
  readonly key: string;
}

/** The output as data, for the agents' renderers. @internal */
export type LogOutputConfig =
  | { readonly type: 'stdout' }
  | { readonly type: 'forward'; readonly host: string; readonly port: number; readonly tls: boolean }
  | {
    readonly type: 'http';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly uri: string;
    readonly headers: Record<string, SecretRef>;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  }
  | {
    readonly type: 'loki';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly labels: Record<string, string>;
    readonly tenantId?: string;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  }
  | {
    readonly type: 'elasticsearch' | 'opensearch';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly index: string;
    /** The strftime format of the date after `<index>-` (per record, UTC; `%Y`, `%m`, `%d`, `%H`); none: one index. */
    readonly indexDateFormat?: string;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  };

/** The longest text `format` (`indexDateFormat`: %Y, %m, %d, %H and separators) gives: %Y 4 digits (to year 9999), the others 2. @internal */
export function indexDateLength(format: string): number {
  return format.replace(/%Y/g, 'YYYY').replace(/%[mdH]/g, 'NN').length;
}
