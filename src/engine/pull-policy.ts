/**
 * Layer 2: the `imagePullPolicy` an image gets, by Kubernetes' own defaulting rule (kubernetes
 * `pkg/apis/core/v1/defaults.go` `SetDefaults_Container`, and the docs' "Default image pull
 * policy", `content/en/docs/concepts/containers/images.md`): `Always` when the tag is `latest` or
 * there is neither a tag nor a digest (the tag then defaults to `latest`), `IfNotPresent` otherwise
 * (a version tag, or a digest without a tag). Written explicitly so that the emitted manifest says
 * what the cluster does, and a mutable tag is never cached stale on a node.
 */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  // a registry's `host:port/` comes before the last slash; a tag after it
  const colon = name.indexOf(':', name.lastIndexOf('/') + 1);
  const tag = colon >= 0 ? name.slice(colon + 1) : '';
  if (tag === 'latest') return 'Always';
  if (tag === '') return at >= 0 ? 'IfNotPresent' : 'Always';
  return 'IfNotPresent';
}
