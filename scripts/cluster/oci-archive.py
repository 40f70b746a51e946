#!/usr/bin/env python3
"""Writes an OCI image archive (an OCI layout in a tar, as `ctr images import` reads it) of one
layer made from a directory, for linux/amd64, named by the `io.containerd.image.name` annotation.

Usage: oci-archive.py <rootfs-dir> <image-name> <out.tar> [entrypoint-json] [cmd-json]
Deterministic: the layer's entries are sorted, owned by root, dated 0.
"""
import hashlib
import io
import json
import os
import platform
import sys
import tarfile


def layer_of(root):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                info = tar.gettarinfo(full, arcname=rel)
                info.uid = info.gid = 0
                info.uname = info.gname = 'root'
                info.mtime = 0
                if info.isfile():
                    with open(full, 'rb') as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def blob(data):
    return 'sha256:' + hashlib.sha256(data).hexdigest(), data


def main():
    root, name, out = sys.argv[1:4]
    entrypoint = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    cmd = json.loads(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else None
    arch = {'x86_64': 'amd64', 'aarch64': 'arm64'}.get(platform.machine(), platform.machine())
    layer_digest, layer = blob(layer_of(root))
    config = {
        'architecture': arch, 'os': 'linux',
        'config': {k: v for k, v in {'Entrypoint': entrypoint, 'Cmd': cmd,
                                     'Env': ['PATH=/bin:/usr/bin:/sbin:/usr/sbin']}.items() if v is not None},
        'rootfs': {'type': 'layers', 'diff_ids': [layer_digest]},
    }
    config_digest, config_data = blob(json.dumps(config, sort_keys=True).encode())
    manifest = {
        'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.manifest.v1+json',
        'config': {'mediaType': 'application/vnd.oci.image.config.v1+json', 'digest': config_digest, 'size': len(config_data)},
        'layers': [{'mediaType': 'application/vnd.oci.image.layer.v1.tar', 'digest': layer_digest, 'size': len(layer)}],
    }
    manifest_digest, manifest_data = blob(json.dumps(manifest, sort_keys=True).encode())
    tag = name.rsplit(':', 1)[1] if ':' in name.rsplit('/', 1)[-1] else 'latest'
    index = {
        'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.index.v1+json',
        'manifests': [{'mediaType': 'application/vnd.oci.image.manifest.v1+json', 'digest': manifest_digest,
                       'size': len(manifest_data), 'platform': {'architecture': arch, 'os': 'linux'},
                       'annotations': {'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag}}],
    }
    files = [('oci-layout', json.dumps({'imageLayoutVersion': '1.0.0'}).encode()),
             ('index.json', json.dumps(index, sort_keys=True).encode())]
    for digest, data in [(layer_digest, layer), (config_digest, config_data), (manifest_digest, manifest_data)]:
        files.append(('blobs/sha256/' + digest.split(':')[1], data))
    with tarfile.open(out, 'w') as tar:
        for d in ['blobs', 'blobs/sha256']:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for path, data in files:
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


if __name__ == '__main__':
    main()
