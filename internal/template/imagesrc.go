package template

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Image transports a spec's `image:` may name. Both are read from local
// files only: no daemon and no registry is ever contacted.
const (
	// TransportOCI is an OCI image layout directory (oci-layout,
	// index.json, blobs/), as written by `skopeo copy ... oci:DIR`,
	// `docker buildx build --output type=oci,tar=false` or
	// go-containerregistry's layout package: "oci:PATH[@sha256:HEX]".
	TransportOCI = "oci"
	// TransportDockerArchive is a `docker save` (or `podman save`) tarball
	// holding one image: "docker-archive:PATH".
	TransportDockerArchive = "docker-archive"
)

// ImageRef names a container image on the host that a template's root
// filesystem is taken from. The zero value names none.
type ImageRef struct {
	Transport string // TransportOCI or TransportDockerArchive
	Path      string // absolute host path of the layout directory or archive
	Digest    string // oci only: the manifest to use when the layout holds several; "" = its only one
}

// IsSet reports whether r names an image.
func (r ImageRef) IsSet() bool { return r.Transport != "" }

// String is r in spec syntax ("oci:/srv/img@sha256:...").
func (r ImageRef) String() string {
	if !r.IsSet() {
		return ""
	}
	s := r.Transport + ":" + r.Path
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// parseImageRef reads an `image:` value. A relative path is relative to
// dir, the spec's directory; a shipped spec (no directory) must use an
// absolute one. The path must exist.
func parseImageRef(s, dir string, shipped bool) (ImageRef, error) {
	transport, p, ok := strings.Cut(s, ":")
	var ref ImageRef
	switch {
	case !ok || p == "":
		return ref, fmt.Errorf("%q is not TRANSPORT:PATH (oci:DIR[@sha256:HEX] or docker-archive:FILE.tar)", s)
	case transport != TransportOCI && transport != TransportDockerArchive:
		return ref, fmt.Errorf("%q: unknown image transport %q (known: %s, %s)", s, transport, TransportOCI, TransportDockerArchive)
	case strings.ContainsAny(p, "\x00\n"):
		return ref, fmt.Errorf("%q contains a NUL or newline", s)
	}
	ref.Transport = transport
	if i := strings.LastIndex(p, "@"); i >= 0 && transport == TransportOCI {
		d := p[i+1:]
		if _, err := v1.NewHash(d); err != nil {
			return ref, fmt.Errorf("%q: %q is not a digest like sha256:<64 hex digits>", s, d)
		}
		p, ref.Digest = p[:i], d
	}
	if !filepath.IsAbs(p) {
		if shipped {
			return ref, fmt.Errorf("%q: a spec built into airlock must name the image by an absolute path", s)
		}
		p = filepath.Join(dir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ref, fmt.Errorf("%q: %v", s, err)
	}
	ref.Path = abs
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ref, fmt.Errorf("%q: %s does not exist", s, abs)
	case err != nil:
		return ref, fmt.Errorf("%q: %v", s, err)
	case transport == TransportOCI && !st.IsDir():
		return ref, fmt.Errorf("%q: %s is not a directory (an OCI layout is a directory; use docker-archive: for a tarball)", s, abs)
	case transport == TransportDockerArchive && !st.Mode().IsRegular():
		return ref, fmt.Errorf("%q: %s is not a regular file (a docker-archive is a `docker save` tarball)", s, abs)
	}
	return ref, nil
}

// maxImageConfigBytes bounds an image's config blob.
const maxImageConfigBytes = 4 << 20

// sourceImage is an opened container image: its content-addressed id (the
// digest of its config, which names every layer's uncompressed digest)
// and its config.
type sourceImage struct {
	ref ImageRef
	img v1.Image
	id  v1.Hash
	cfg *v1.ConfigFile
}

// idString is the image id, "" for no image (si nil).
func (si *sourceImage) idString() string {
	if si == nil {
		return ""
	}
	return si.id.String()
}

// openImage opens the image r names and checks it can run here: a Linux
// image for this host's architecture. Errors are InvalidArgument naming
// the reference: the image is the spec's input.
func openImage(r ImageRef) (*sourceImage, error) {
	img, err := loadImage(r)
	if err != nil {
		return nil, errdefs.InvalidArgument("image %s: %v", r, err)
	}
	// One read of the config gives both the id and the parsed config, so
	// the layers are later checked against exactly what the id names.
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, errdefs.InvalidArgument("image %s: read its config: %v", r, err)
	}
	if len(raw) > maxImageConfigBytes {
		return nil, errdefs.InvalidArgument("image %s: config larger than %d bytes", r, maxImageConfigBytes)
	}
	id, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, errdefs.InvalidArgument("image %s: parse its config: %v", r, err)
	}
	if cfg.OS != "" && cfg.OS != "linux" {
		return nil, errdefs.InvalidArgument("image %s is for %s, not linux", r, cfg.OS)
	}
	if cfg.Architecture != "" && cfg.Architecture != runtime.GOARCH {
		return nil, errdefs.InvalidArgument("image %s is for %s; this host's guests are %s", r, cfg.Architecture, runtime.GOARCH)
	}
	return &sourceImage{ref: r, img: img, id: id, cfg: cfg}, nil
}

func loadImage(r ImageRef) (v1.Image, error) {
	switch r.Transport {
	case TransportDockerArchive:
		// nil tag: the archive must hold exactly one image.
		return tarball.ImageFromPath(r.Path, nil)
	case TransportOCI:
		idx, err := layout.ImageIndexFromPath(r.Path)
		if err != nil {
			return nil, err
		}
		return pickImage(idx, r.Digest, 0)
	}
	return nil, fmt.Errorf("unknown transport %q", r.Transport)
}

// pickImage finds the image in an OCI index: the manifest with digest
// want, or the index's only one; a nested index (a multi-platform image)
// is searched for this host's platform.
func pickImage(idx v1.ImageIndex, want string, depth int) (v1.Image, error) {
	if depth > 4 {
		return nil, errors.New("image indexes nested too deep")
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var cands []v1.Descriptor
	for _, d := range im.Manifests {
		if want != "" && d.Digest.String() == want {
			cands = []v1.Descriptor{d}
			break
		}
		if want == "" && (d.Platform == nil || (d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH)) {
			cands = append(cands, d)
		}
	}
	switch {
	case len(cands) == 0 && want != "":
		return nil, fmt.Errorf("no manifest %s in the layout", want)
	case len(cands) == 0:
		return nil, fmt.Errorf("no image for linux/%s in the index", runtime.GOARCH)
	case len(cands) > 1:
		var names []string
		for _, d := range cands {
			names = append(names, d.Digest.String())
		}
		return nil, fmt.Errorf("the layout holds %d manifests; name one as oci:PATH@DIGEST (%s)", len(cands), strings.Join(names, ", "))
	}
	d := cands[0]
	if d.MediaType.IsIndex() {
		child, err := idx.ImageIndex(d.Digest)
		if err != nil {
			return nil, err
		}
		return pickImage(child, "", depth+1)
	}
	return idx.Image(d.Digest)
}

// execDefaults returns the image's environment (KEY=VALUE entries) as a
// map and its working directory, for the template's execs.
func (si *sourceImage) execDefaults() (map[string]string, string, error) {
	env := map[string]string{}
	for _, kv := range si.cfg.Config.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envKeyRE.MatchString(k) || strings.ContainsRune(v, 0) {
			return nil, "", errdefs.InvalidArgument("image %s: config Env entry %q is not KEY=VALUE with a valid name", si.ref, kv)
		}
		env[k] = v
	}
	wd := si.cfg.Config.WorkingDir
	if wd != "" && (!filepath.IsAbs(wd) || strings.ContainsAny(wd, "\x00\n")) {
		return nil, "", errdefs.InvalidArgument("image %s: config WorkingDir %q is not an absolute path", si.ref, wd)
	}
	if wd != "" {
		wd = filepath.Clean(wd)
	}
	return env, wd, nil
}
