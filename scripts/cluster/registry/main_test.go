package main

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// buildLayout runs the layout command on a small tree and returns the layout directory.
func buildLayout(t *testing.T, dir, ref string) string {
	t.Helper()
	root := filepath.Join(dir, "rootfs-"+filepath.Base(ref))
	must(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "bin", "prog"), []byte("#!/bin/sh\necho "+ref+"\n"), 0o755))
	must(t, os.Symlink("prog", filepath.Join(root, "bin", "alias")))
	out := filepath.Join(dir, "oci-"+strings.NewReplacer("/", "_", ":", "_").Replace(ref))
	must(t, layoutCmd([]string{"-rootfs", root, "-out", out, "-name", ref, "-entrypoint", `["/bin/prog"]`, "-user", "65532", "-label", "org.opencontainers.image.version=1.2.3"}))
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A real client (go-containerregistry's, as `crane pull` uses it) pulls every name the names
// file lists, by the path containerd asks a mirror for, and gets the layout's image; a name
// that is not listed is a 404 the registry logs.
func TestServeNamesFromLayouts(t *testing.T) {
	dir := t.TempDir()
	a := buildLayout(t, dir, "docker.io/library/busybox:1.36.1-musl")
	b := buildLayout(t, dir, "ghcr.io/example/shop-web:1.4.2")
	names := filepath.Join(dir, "names")
	must(t, os.WriteFile(names, []byte("# comment\nbusybox:1.36.1-musl "+filepath.Base(a)+"\nexample/alias:9 "+filepath.Base(a)+"\nghcr.io/example/shop-web:1.4.2 "+filepath.Base(b)+"\n"), 0o644))
	s, err := load(dir, names)
	must(t, err)
	srv := httptest.NewServer(s) // 127.0.0.1
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	for _, c := range []struct{ repo, layout, prog string }{
		{"library/busybox:1.36.1-musl", a, "busybox"},
		{"example/alias:9", a, "busybox"},
		{"example/shop-web:1.4.2", b, "shop-web"},
	} {
		ref, err := name.ParseReference(host+"/"+c.repo, name.Insecure)
		must(t, err)
		img, err := remote.Image(ref)
		must(t, err)
		got, _ := img.Digest()
		want := mustLayoutDigest(t, c.layout)
		if got.String() != want {
			t.Errorf("%s: digest %s, want the layout's %s", c.repo, got, want)
		}
		cf, err := img.ConfigFile()
		must(t, err)
		if cf.Architecture != "amd64" || cf.OS != "linux" || cf.Config.User != "65532" || strings.Join(cf.Config.Entrypoint, " ") != "/bin/prog" ||
			cf.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
			t.Errorf("%s: config %+v", c.repo, cf)
		}
		layers, err := img.Layers()
		must(t, err)
		if len(layers) != 1 {
			t.Fatalf("%s: %d layers", c.repo, len(layers))
		}
		rc, err := layers[0].Uncompressed()
		must(t, err)
		files := readTar(t, rc)
		if !strings.Contains(files["bin/prog"], c.prog) || files["bin/alias"] != "-> prog" {
			t.Errorf("%s: layer %v", c.repo, files)
		}
	}

	for _, path := range []string{"/v2/library/busybox/manifests/latest", "/v2/library/nothere/manifests/1", "/v2/library/busybox/blobs/sha256:00"} {
		resp, err := http.Get(srv.URL + path)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v2/library/busybox/manifests/x", nil)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT: status %d, want 405 (read-only)", resp.StatusCode)
	}
}

// The same tree gives the same image digest (entries sorted, owned by root, dated 0).
func TestLayoutDeterministic(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	x := mustLayoutDigest(t, buildLayout(t, d1, "busybox:1"))
	y := mustLayoutDigest(t, buildLayout(t, d2, "busybox:1"))
	if x != y {
		t.Errorf("digests differ: %s %s", x, y)
	}
}

func TestNamesFileErrors(t *testing.T) {
	dir := t.TempDir()
	a := buildLayout(t, dir, "busybox:1")
	for body, want := range map[string]string{
		"busybox:1":         "want `REF LAYOUT`",
		"busybox:1 nothere": "nothere",
		"":                  "names no image",
		"busybox@sha256:" + strings.Repeat("0", 64) + " " + filepath.Base(a): "not a name:tag reference",
	} {
		f := filepath.Join(dir, "names")
		must(t, os.WriteFile(f, []byte(body+"\n"), 0o644))
		if _, err := load(dir, f); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", body, err, want)
		}
	}
}

func mustLayoutDigest(t *testing.T, layout string) string {
	t.Helper()
	s := &store{tags: map[string]manifest{}, manifests: map[string]manifest{}, blobs: map[string]string{}}
	m, err := s.addLayout(layout)
	must(t, err)
	return m.digest
}

func readTar(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	tr := tar.NewReader(r)
	files := map[string]string{}
	var order []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d gid %d mtime %v", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		order = append(order, h.Name)
		switch h.Typeflag {
		case tar.TypeSymlink:
			files[h.Name] = "-> " + h.Linkname
		case tar.TypeReg:
			var buf bytes.Buffer
			_, _ = io.Copy(&buf, tr)
			files[h.Name] = buf.String()
		}
	}
	if !sort.StringsAreSorted(order) {
		t.Errorf("entries not sorted: %v", order)
	}
	return files
}
