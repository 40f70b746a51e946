/**
 * The Pod Security Standards "restricted" profile (which includes "baseline"), as a checker of
 * containers and volumes. Rules as on https://kubernetes.io/docs/concepts/security/pod-security-standards/
 * (policy version latest), for the fields a container or a pod volume can carry.
 */

const ALLOWED_VOLUME_TYPES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);

/**
 * Violations of the restricted profile by one container, given the pod-level security context
 * (which can supply runAsNonRoot, runAsUser and seccompProfile).
 */
export function restrictedViolations(container: any, podSecurityContext: any = {}): string[] {
  const at = `container '${container.name}'`;
  const sc = container.securityContext ?? {};
  const v: string[] = [];
  // baseline
  if (sc.privileged === true) v.push(`${at}: privileged must be unset or false`);
  if (sc.windowsOptions?.hostProcess === true) v.push(`${at}: hostProcess must not be true`);
  for (const p of container.ports ?? []) {
    if (p.hostPort !== undefined && p.hostPort !== 0) v.push(`${at}: hostPort ${p.hostPort} is not allowed`);
  }
  if (sc.procMount !== undefined && sc.procMount !== 'Default') v.push(`${at}: procMount must be Default`);
  const seLinuxType = sc.seLinuxOptions?.type;
  if (seLinuxType !== undefined && !['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'].includes(seLinuxType)) {
    v.push(`${at}: seLinuxOptions.type ${seLinuxType} is not allowed`);
  }
  if (sc.seLinuxOptions?.user !== undefined || sc.seLinuxOptions?.role !== undefined) v.push(`${at}: seLinuxOptions user/role must be unset`);
  const apparmor = sc.appArmorProfile?.type;
  if (apparmor !== undefined && !['RuntimeDefault', 'Localhost'].includes(apparmor)) v.push(`${at}: appArmorProfile ${apparmor} is not allowed`);
  for (const cap of sc.capabilities?.add ?? []) {
    if (!BASELINE_CAPABILITIES.has(cap)) v.push(`${at}: capability ${cap} is not allowed (baseline)`);
  }
  // restricted
  if (sc.allowPrivilegeEscalation !== false) v.push(`${at}: allowPrivilegeEscalation must be false`);
  const drop: string[] = sc.capabilities?.drop ?? [];
  if (!drop.includes('ALL')) v.push(`${at}: capabilities.drop must include ALL`);
  for (const cap of sc.capabilities?.add ?? []) {
    if (cap !== 'NET_BIND_SERVICE') v.push(`${at}: only NET_BIND_SERVICE may be added (got ${cap})`);
  }
  const runAsNonRoot = sc.runAsNonRoot ?? podSecurityContext.runAsNonRoot;
  if (runAsNonRoot !== true) v.push(`${at}: runAsNonRoot must be true`);
  const runAsUser = sc.runAsUser ?? podSecurityContext.runAsUser;
  if (runAsUser === 0) v.push(`${at}: runAsUser must not be 0`);
  const seccomp = sc.seccompProfile?.type ?? podSecurityContext.seccompProfile?.type;
  if (!['RuntimeDefault', 'Localhost'].includes(seccomp)) v.push(`${at}: seccompProfile.type must be RuntimeDefault or Localhost (got ${seccomp})`);
  return v;
}

/** Violations of the restricted profile's volume-type rule. */
export function volumeViolations(volume: any): string[] {
  const types = Object.keys(volume).filter(k => k !== 'name');
  return types.filter(t => !ALLOWED_VOLUME_TYPES.includes(t)).map(t => `volume '${volume.name}': type ${t} is not allowed`);
}
