package template

import (
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Resolve returns s flattened with its `from` chain: the parents' suite,
// packages, files, build commands, env and kernel_args come first and s
// appends (env: overrides) its own; scalar fields s leaves unset are
// inherited. lookup returns a parent by name (unresolved is fine). An
// unknown parent is a NotFound naming `from` and, through lookup's error,
// where it was looked for; a cycle is an InvalidArgument.
func (s *Spec) Resolve(lookup func(name string) (*Spec, error)) (*Spec, error) {
	return s.resolve(lookup, nil)
}

func (s *Spec) resolve(lookup func(string) (*Spec, error), chain []string) (*Spec, error) {
	if s.resolved {
		return s, nil
	}
	chain = append(chain, s.Name)
	if len(chain) > maxInheritanceDepth {
		return nil, s.errf("from", "inheritance deeper than %d: %s", maxInheritanceDepth, strings.Join(chain, " -> "))
	}
	if contains(chain, s.From) {
		return nil, s.errf("from", "inheritance cycle: %s -> %s", strings.Join(chain, " -> "), s.From)
	}
	if lookup == nil {
		return nil, s.errf("from", "cannot resolve %q without a template lookup", s.From)
	}
	parent, err := lookup(s.From)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%s: from: unknown template %q: %w", s.where("from"), s.From, err)
		}
		return nil, fmt.Errorf("%s: from: %w", s.where("from"), err)
	}
	if parent.Name != s.From {
		return nil, s.errf("from", "lookup of %q returned template %q", s.From, parent.Name)
	}
	if parent, err = parent.resolve(lookup, chain); err != nil {
		return nil, err
	}
	return s.mergeOnto(parent)
}

// mergeOnto returns a new, resolved spec: parent (resolved) overlaid by s.
func (s *Spec) mergeOnto(parent *Spec) (*Spec, error) {
	out := &Spec{
		Name:  s.Name,
		From:  s.From,
		Path:  s.Path,
		Dir:   s.Dir,
		set:   s.set,
		lines: s.lines,
		// where s came from
		shipped: s.shipped,
		// scalars: inherited unless s sets them
		Suite:             parent.Suite,
		Image:             parent.Image,
		Workdir:           parent.Workdir,
		Warmup:            parent.Warmup,
		WarmupExec:        parent.WarmupExec,
		MemoryMiB:         parent.MemoryMiB,
		VCPUs:             parent.VCPUs,
		DefaultTTLSeconds: parent.DefaultTTLSeconds,
		RootfsSizeMiB:     parent.RootfsSizeMiB,
		resolved:          true,
	}
	if err := s.checkBase(parent); err != nil {
		return nil, err
	}
	if s.set["suite"] {
		if s.Suite != parent.Suite {
			return nil, s.errf("suite", "%q differs from parent %q's suite %q", s.Suite, parent.Name, parent.Suite)
		}
	}
	s.overrideScalars(out)

	seen := map[string]bool{}
	for _, from := range []*Spec{parent, s} {
		for i, p := range from.Packages {
			if !seen[p] {
				seen[p] = true
				out.Packages = append(out.Packages, p)
				out.pkgOrigins = append(out.pkgOrigins, from.pkgOrigin(i))
			}
		}
	}
	// A child's file replaces the parent's file at the same dst, in place.
	out.Files = append(out.Files, parent.Files...)
	for _, f := range s.Files {
		replaced := false
		for i := range out.Files {
			if out.Files[i].Dst == f.Dst {
				out.Files[i], replaced = f, true
			}
		}
		if !replaced {
			out.Files = append(out.Files, f)
		}
	}
	out.Build = append(append([]string(nil), parent.Build...), s.Build...)
	out.Keep = append(append([]string(nil), parent.Keep...), s.Keep...)
	out.KernelArgs = append(append([]string(nil), parent.KernelArgs...), s.KernelArgs...)
	if len(parent.Env)+len(s.Env) > 0 {
		out.Env = map[string]string{}
		for k, v := range parent.Env {
			out.Env[k] = v
		}
		for k, v := range s.Env {
			out.Env[k] = v
		}
	}
	if err := out.checkMinimal(); err != nil {
		return nil, err
	}
	return out, nil
}

// overrideScalars sets in out the scalar fields s itself sets.
func (s *Spec) overrideScalars(out *Spec) {
	if s.set["workdir"] {
		out.Workdir = s.Workdir
	}
	if s.set["warmup"] {
		out.Warmup, out.WarmupExec = s.Warmup, s.WarmupExec
	}
	if s.set["memory_mib"] {
		out.MemoryMiB = s.MemoryMiB
	}
	if s.set["vcpus"] {
		out.VCPUs = s.VCPUs
	}
	if s.set["default_ttl_seconds"] {
		out.DefaultTTLSeconds = s.DefaultTTLSeconds
	}
	if s.set["rootfs_size_mib"] {
		out.RootfsSizeMiB = s.RootfsSizeMiB
	}
}

// checkBase refuses a child that changes its parent's base: a child of
// an image template may not name another image, a suite or packages, and
// a child of a Debian template may not switch to an image.
func (s *Spec) checkBase(parent *Spec) error {
	switch {
	case parent.Image.IsSet() && s.Image.IsSet() && s.Image != parent.Image:
		return s.errf("image", "%s differs from parent %q's image %s: a child keeps its parent's base", s.Image, parent.Name, parent.Image)
	case parent.Image.IsSet() && s.set["suite"]:
		return s.errf("suite", "parent %q is built from image %s, not a Debian suite", parent.Name, parent.Image)
	case parent.Image.IsSet() && len(s.Packages) > 0:
		return s.errf("packages", "parent %q is built from image %s: install packages in the image, or with a build step", parent.Name, parent.Image)
	case !parent.Image.IsSet() && s.Image.IsSet():
		return s.errf("image", "parent %q is built from Debian packages: a child cannot change its parent's base to an image", parent.Name)
	}
	return nil
}

// pkgOrigin is where Packages[i] was declared.
func (s *Spec) pkgOrigin(i int) origin {
	if i < len(s.pkgOrigins) {
		return s.pkgOrigins[i]
	}
	return origin{source: s.source(), field: fmt.Sprintf("packages[%d]", i)}
}

// Resolved reports whether s is flattened (has no `from`, or went through
// Resolve).
func (s *Spec) Resolved() bool { return s.resolved }
