/**
 * Vector loading a vector.yaml as the pinned release does (vectordotdev/vector v0.57.0):
 * - no environment interpolation: from 0.57 `${NAME}` and `$NAME` stay as they are unless Vector is
 *   started with `--dangerously-allow-env-var-interpolation` (src/cli.rs, `default_value = "false"`;
 *   src/config/loading/mod.rs `prepare_input` and `env_var_interpolation_enabled`, "Defaults to `false`");
 * - secrets: every `SECRET[<backend>.<key>]` of the text (src/config/loading/secret.rs `COLLECTOR`)
 *   names a backend of the config's `secret` table; a `directory` backend reads the file `<path>/<key>`
 *   whole (src/secrets/directory.rs: an empty file is an error, `remove_trailing_whitespace` trims the
 *   end), and the value replaces the placeholder in the text before it is parsed
 *   (src/config/loading/config_builder.rs `prepare`).
 * `files` maps a path to the content of that file in the container.
 */
import { parse as parseYaml } from 'yaml';

/** Vector's `COLLECTOR` (src/config/loading/secret.rs, v0.57.0); `[[:word:]]` is ASCII in Rust's regex. */
const COLLECTOR = /SECRET\[([A-Za-z0-9_]+)\.([A-Za-z0-9_.\-/]+)\]/g;

/** An environment interpolation Vector 0.54-0.56 would have done and 0.57 does not (src/config/vars.rs). */
export const VECTOR_ENV_REFERENCE = /\$\{[^}]*\}|\$[A-Za-z0-9_]/;

export function vectorLoad(text: string, files: Record<string, string>): any {
  const backends = (parseYaml(text) ?? {}).secret ?? {};
  const substituted = text.replace(COLLECTOR, (_m, backend: string, key: string) => {
    const b = backends[backend];
    if (b === undefined) throw new Error(`Backend "${backend}" is required for secret retrieval but was not found in config.`);
    if (b.type !== 'directory') throw new Error(`this model reads only the directory backend, not ${b.type}`);
    const path = `${b.path}/${key}`;
    if (!(path in files)) throw new Error(`Error while retrieving secret from backend "${backend}": no file ${path}.`);
    const value = b.remove_trailing_whitespace === true ? files[path].trimEnd() : files[path];
    if (value === '') throw new Error(`secret in file '${key}' was empty`);
    return value;
  });
  return parseYaml(substituted);
}

/** The files of a Secret volume (`projected` secret sources, or `secret`) mounted at `mountPath`, from `values` (secret name -> key -> value). */
export function secretVolumeFiles(volume: any, mountPath: string, values: Record<string, Record<string, string>>): Record<string, string> {
  const sources: any[] = volume.projected?.sources?.map((s: any) => s.secret) ?? [{ ...volume.secret, name: volume.secret.secretName }];
  const files: Record<string, string> = {};
  for (const s of sources) {
    for (const item of s.items) {
      const value = values[s.name]?.[item.key];
      if (value === undefined) throw new Error(`no key ${item.key} in Secret ${s.name}: the pod would not start`);
      files[`${mountPath}/${item.path}`] = value;
    }
  }
  return files;
}
