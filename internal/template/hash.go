package template

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Hash returns a stable hex sha256 of the resolved spec: every field that
// shapes the template, plus the sha256 of every copied file's content, so
// editing a copied file changes the hash. Package order does not matter;
// file order, build order and kernel_args order do.
func (s *Spec) Hash() (string, error) {
	digests, err := s.fileDigests()
	if err != nil {
		return "", err
	}
	return s.hashWith(digests)
}

func (s *Spec) hashWith(digests []string) (string, error) {
	id, err := s.imageID()
	if err != nil {
		return "", err
	}
	img, err := s.imageInput(digests, id)
	if err != nil {
		return "", err
	}
	return hashJSON(struct {
		Image             imageInput        `json:"image"`
		Name              string            `json:"name"`
		Build             []string          `json:"build"`
		Warmup            string            `json:"warmup"`
		WarmupExec        [][]string        `json:"warmup_exec,omitempty"`
		Env               map[string]string `json:"env"`
		Workdir           string            `json:"workdir,omitempty"`
		MemoryMiB         int               `json:"memory_mib"`
		VCPUs             int               `json:"vcpus"`
		KernelArgs        []string          `json:"kernel_args"`
		DefaultTTLSeconds int               `json:"default_ttl_seconds"`
	}{
		Image: img, Name: s.Name, Build: s.Build, Warmup: s.Warmup, WarmupExec: s.WarmupExec,
		Env: s.Env, Workdir: s.Workdir, MemoryMiB: s.MemoryMiB, VCPUs: s.VCPUs, KernelArgs: s.KernelArgs,
		DefaultTTLSeconds: s.DefaultTTLSeconds,
	})
}

// hashJSON is the hex sha256 of v's JSON (map keys sorted: stable).
func hashJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ImageHash returns a stable hex sha256 of what goes into the spec's root
// image: suite, packages (order-insensitive), size and copied files with
// their content, or for a template built from a container image the
// image's id (the digest of its config, which names every layer) in place
// of suite and packages. Build steps, warm-up, env and machine shape run
// in the VM and are not part of it.
func (s *Spec) ImageHash() (string, error) {
	digests, err := s.fileDigests()
	if err != nil {
		return "", err
	}
	id, err := s.imageID()
	if err != nil {
		return "", err
	}
	return s.imageHashWith(digests, id)
}

// imageID is the id of the spec's container image, "" for none.
func (s *Spec) imageID() (string, error) {
	if !s.Image.IsSet() {
		return "", nil
	}
	si, err := openImage(s.Image)
	if err != nil {
		return "", err
	}
	return si.id.String(), nil
}

func (s *Spec) imageHashWith(digests []string, imageID string) (string, error) {
	img, err := s.imageInput(digests, imageID)
	if err != nil {
		return "", err
	}
	return hashJSON(img)
}

// imageInput is everything that shapes the root image.
type imageInput struct {
	V             int         `json:"v"`
	Suite         string      `json:"suite"`
	Image         string      `json:"image,omitempty"` // container image id (sha256 of its config)
	Packages      []string    `json:"packages"`        // sorted
	Files         []hashInput `json:"files"`
	RootfsSizeMiB int         `json:"rootfs_size_mib"`
	Keep          []string    `json:"keep,omitempty"` // sorted
}

type hashInput struct {
	Dst    string `json:"dst"`
	Mode   uint32 `json:"mode"`
	SHA256 string `json:"sha256"`
}

func (s *Spec) imageInput(digests []string, imageID string) (imageInput, error) {
	if !s.resolved {
		return imageInput{}, errdefs.FailedPrecondition("template %q: hash before its `from` is resolved", s.Name)
	}
	in := imageInput{V: hashSchemeVersion, Suite: s.Suite, Image: imageID, RootfsSizeMiB: s.RootfsSizeMiB}
	in.Packages = append([]string(nil), s.Packages...)
	sort.Strings(in.Packages)
	if len(s.Keep) > 0 {
		in.Keep = append([]string(nil), s.Keep...)
		sort.Strings(in.Keep)
	}
	for i, f := range s.Files {
		in.Files = append(in.Files, hashInput{Dst: f.Dst, Mode: unixMode(f.Mode), SHA256: digests[i]})
	}
	return in, nil
}

// fileDigests returns the sha256 of each of s.Files, in order.
func (s *Spec) fileDigests() ([]string, error) {
	out := make([]string, len(s.Files))
	for i, f := range s.Files {
		r, err := f.open()
		if err != nil {
			return nil, fmt.Errorf("template %q: files[%d] %s: %w", s.Name, i, f.Src, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("template %q: hash %s: %w", s.Name, f.Src, err)
		}
		out[i] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// open opens the file's source confined to its spec's directory (os.Root
// refuses symlinks that lead outside it), so a symlink swapped in after
// validation still cannot reach outside.
func (f File) open() (*os.File, error) {
	var r *os.File
	var err error
	if f.tool != "" {
		r, err = os.Open(f.tool)
	} else {
		r, err = os.OpenInRoot(f.dir, filepath.Clean(f.Src))
	}
	if err != nil {
		return nil, errdefs.InvalidArgument("%s: %v", f.Src, err)
	}
	st, err := r.Stat()
	if err != nil || !st.Mode().IsRegular() {
		r.Close()
		return nil, errdefs.InvalidArgument("%s is not a regular file", f.Src)
	}
	return r, nil
}

func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}
