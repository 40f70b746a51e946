// Command registry builds the test cluster's images and serves them, with no registry reachable.
//
//	registry layout -rootfs DIR -out LAYOUT -name REF [-entrypoint JSON] [-cmd JSON] [-env K=V]... [-label K=V]... [-workdir DIR] [-user U]
//	registry serve [-images DIR] [-names FILE] ADDR
//
// layout: writes an OCI image layout of one linux/amd64 image whose single layer is the directory
// DIR (entries sorted, owned by root, dated 0, gzip without a timestamp: the same tree gives the
// same digest). The layout's index names the image REF (org.opencontainers.image.ref.name and
// io.containerd.image.name), so `tar -C LAYOUT -c .` is also an archive `ctr images import` reads.
//
// serve: a read-only registry (the distribution API's pull side: /v2/, manifests and blobs, GET
// and HEAD) on ADDR, which must be a loopback address. It serves every OCI layout under DIR (each
// sub-directory with an index.json) under the names FILE lists (default DIR/names), one
// `REF LAYOUT-SUBDIR` a line: REF is an image reference as a pod spec writes it (`busybox:1.36.1-musl`,
// `fluent/fluent-bit:5.1.1`, `docker.io/envoyproxy/envoy:v1.40.0`); it is served under its
// repository path without the registry host (`library/busybox`, `fluent/fluent-bit`), which is
// what containerd asks a mirror for. Blobs are read from the layouts' files, never copied. Every
// request for a name that is not served is logged to stderr with "not served", so a manifest
// that uses an image nobody built shows up in the registry's log.
package main

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("registry: ")
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "layout":
		err = layoutCmd(os.Args[2:])
	case "serve":
		err = serveCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		log.Fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: registry layout -rootfs DIR -out LAYOUT -name REF [-entrypoint JSON] [-cmd JSON] [-env K=V]... [-label K=V]... [-workdir DIR] [-user U]")
	fmt.Fprintln(os.Stderr, "       registry serve [-images DIR] [-names FILE] ADDR")
	os.Exit(2)
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func layoutCmd(args []string) error {
	fl := flag.NewFlagSet("layout", flag.ExitOnError)
	rootfs := fl.String("rootfs", "", "the image's file tree")
	out := fl.String("out", "", "the OCI layout directory to write (replaced)")
	ref := fl.String("name", "", "the image's name, e.g. docker.io/library/busybox:1.36.1-musl")
	entrypoint := fl.String("entrypoint", "", "the entrypoint, a JSON array")
	cmd := fl.String("cmd", "", "the command, a JSON array")
	workdir := fl.String("workdir", "", "the working directory")
	user := fl.String("user", "", "the user")
	var env, labels multi
	fl.Var(&env, "env", "an environment variable K=V (repeatable)")
	fl.Var(&labels, "label", "a label K=V (repeatable), e.g. org.opencontainers.image.version=1.37.0")
	_ = fl.Parse(args)
	if *rootfs == "" || *out == "" || *ref == "" || fl.NArg() != 0 {
		usage()
	}
	if _, err := name.ParseReference(*ref); err != nil {
		return fmt.Errorf("-name %q: %w", *ref, err)
	}
	cfg := v1.Config{Env: env, WorkingDir: *workdir, User: *user}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("-label %q: want K=V", l)
		}
		if cfg.Labels == nil {
			cfg.Labels = map[string]string{}
		}
		cfg.Labels[k] = v
	}
	for _, a := range []struct {
		flag string
		val  string
		dst  *[]string
	}{{"entrypoint", *entrypoint, &cfg.Entrypoint}, {"cmd", *cmd, &cfg.Cmd}} {
		if a.val != "" {
			if err := json.Unmarshal([]byte(a.val), a.dst); err != nil {
				return fmt.Errorf("-%s %q is not a JSON array of strings: %w", a.flag, a.val, err)
			}
		}
	}

	tmp, err := os.CreateTemp("", "layer-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeTree(tmp, *rootfs); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromFile(tmp.Name(), tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "scripts/cluster/images.sh"}})
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config = cfg
	cf.Created = v1.Time{}
	cf.History[0].Created = v1.Time{}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	p, err := layout.Write(*out, empty.Index)
	if err != nil {
		return err
	}
	full, _ := name.ParseReference(*ref)
	ann := map[string]string{
		"org.opencontainers.image.ref.name": full.Identifier(),
		"io.containerd.image.name":          full.Name(),
	}
	if err := p.AppendImage(img, layout.WithAnnotations(ann), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		return err
	}
	d, _ := img.Digest()
	fmt.Printf("%s %s\n", full.Name(), d)
	return nil
}

// writeTree writes dir as a tar stream: sorted, root-owned, dated 0, hard links as copies.
func writeTree(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "root", "root"
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(tw, f); err != nil {
				return err
			}
		}
		return nil
	}) // WalkDir visits in lexical order
	if err != nil {
		return err
	}
	return tw.Close()
}

// --- serve ---

type manifest struct {
	mediaType string
	body      []byte
	digest    string
}

type store struct {
	tags      map[string]manifest // "repo:tag"
	manifests map[string]manifest // digest
	blobs     map[string]string   // digest -> file
}

func serveCmd(args []string) error {
	fl := flag.NewFlagSet("serve", flag.ExitOnError)
	images := fl.String("images", defaultImages(), "the directory of OCI layouts")
	names := fl.String("names", "", "the names file (default IMAGES/names)")
	_ = fl.Parse(args)
	if fl.NArg() != 1 {
		usage()
	}
	addr := fl.Arg(0)
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q: only a loopback address is allowed", addr)
	}
	if *names == "" {
		*names = filepath.Join(*images, "names")
	}
	s, err := load(*images, *names)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("serving %d names (%d manifests, %d blobs) from %s on %s", len(s.tags), len(s.manifests), len(s.blobs), *images, addr)
	return http.Serve(ln, s)
}

func defaultImages() string {
	if c := os.Getenv("CDK8S_SIDECARS_CACHE"); c != "" {
		return filepath.Join(c, "images", "oci")
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".cache", "cdk8s-sidecars", "images", "oci")
}

// load reads the names file and the layouts it names.
func load(dir, namesFile string) (*store, error) {
	s := &store{tags: map[string]manifest{}, manifests: map[string]manifest{}, blobs: map[string]string{}}
	f, err := os.Open(namesFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	loaded := map[string]manifest{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want `REF LAYOUT`, got %q", namesFile, n, line)
		}
		// an explicit tag: a reference without one means :latest to a pod spec, say it rather than guess
		last := fields[0][strings.LastIndex(fields[0], "/")+1:]
		ref, err := name.NewTag(fields[0])
		if err != nil || !strings.Contains(last, ":") || strings.Contains(fields[0], "@") {
			return nil, fmt.Errorf("%s:%d: %q is not a name:tag reference (%v)", namesFile, n, fields[0], err)
		}
		m, ok := loaded[fields[1]]
		if !ok {
			if m, err = s.addLayout(filepath.Join(dir, fields[1])); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", namesFile, n, err)
			}
			loaded[fields[1]] = m
		}
		s.tags[ref.Context().RepositoryStr()+":"+ref.TagStr()] = m
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(s.tags) == 0 {
		return nil, fmt.Errorf("%s names no image", namesFile)
	}
	return s, nil
}

// addLayout registers the one image of an OCI layout (its manifest and every blob file).
func (s *store) addLayout(dir string) (manifest, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return manifest{}, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return manifest{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return manifest{}, err
	}
	if len(im.Manifests) != 1 {
		return manifest{}, fmt.Errorf("%s: want one image in the layout, found %d", dir, len(im.Manifests))
	}
	desc := im.Manifests[0]
	body, err := os.ReadFile(filepath.Join(dir, "blobs", desc.Digest.Algorithm, desc.Digest.Hex))
	if err != nil {
		return manifest{}, err
	}
	m := manifest{mediaType: string(desc.MediaType), body: body, digest: desc.Digest.String()}
	s.manifests[m.digest] = m
	img, err := p.Image(desc.Digest)
	if err != nil {
		return manifest{}, err
	}
	mf, err := img.Manifest()
	if err != nil {
		return manifest{}, err
	}
	for _, d := range append([]v1.Descriptor{mf.Config}, mf.Layers...) {
		file := filepath.Join(dir, "blobs", d.Digest.Algorithm, d.Digest.Hex)
		st, err := os.Stat(file)
		if err != nil {
			return manifest{}, err
		}
		if st.Size() != d.Size {
			return manifest{}, fmt.Errorf("%s: size %d, the manifest says %d", file, st.Size(), d.Size)
		}
		s.blobs[d.Digest.String()] = file
	}
	return m, nil
}

var route = regexp.MustCompile(`^/v2/(.+)/(manifests|blobs)/([^/]+)$`)

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		apiError(w, r, http.StatusMethodNotAllowed, "UNSUPPORTED", "this registry is read-only")
		return
	}
	if r.URL.Path == "/v2/" || r.URL.Path == "/v2" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
		return
	}
	m := route.FindStringSubmatch(r.URL.Path)
	if m == nil {
		apiError(w, r, http.StatusNotFound, "NAME_UNKNOWN", "no such path")
		return
	}
	repo, kind, id := m[1], m[2], m[3]
	if kind == "manifests" {
		var mf manifest
		var ok bool
		if strings.HasPrefix(id, "sha256:") {
			mf, ok = s.manifests[id]
		} else {
			mf, ok = s.tags[repo+":"+id]
		}
		if !ok {
			log.Printf("not served: %s %s:%s", r.Method, repo, id)
			apiError(w, r, http.StatusNotFound, "MANIFEST_UNKNOWN", fmt.Sprintf("%s:%s is not served (see the names file)", repo, id))
			return
		}
		w.Header().Set("Content-Type", mf.mediaType)
		w.Header().Set("Docker-Content-Digest", mf.digest)
		w.Header().Set("Content-Length", fmt.Sprint(len(mf.body)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(mf.body)
		}
		log.Printf("%s manifest %s:%s %s", r.Method, repo, id, mf.digest)
		return
	}
	file, ok := s.blobs[id]
	if !ok {
		if mf, isManifest := s.manifests[id]; isManifest {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Docker-Content-Digest", mf.digest)
			w.Header().Set("Content-Length", fmt.Sprint(len(mf.body)))
			if r.Method == http.MethodGet {
				_, _ = w.Write(mf.body)
			}
			return
		}
		log.Printf("not served: blob %s of %s", id, repo)
		apiError(w, r, http.StatusNotFound, "BLOB_UNKNOWN", id+" is not served")
		return
	}
	f, err := os.Open(file)
	if err != nil {
		apiError(w, r, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Docker-Content-Digest", id)
	// ServeContent answers Range requests and HEAD (containerd resumes a layer with Range)
	http.ServeContent(w, r, "", time.Time{}, f)
}

func apiError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
	}
}
