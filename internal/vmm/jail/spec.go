package jail

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Spec is everything the helper needs to build one jail. The host side
// writes it as the helper's first argument (JSON); it holds no secret.
type Spec struct {
	ID   string `json:"id"`   // becomes the hostname in the UTS namespace
	Root string `json:"root"` // an empty host directory the new root is built on
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	// Groups are supplementary gids kept (the kvm group when /dev/kvm is
	// bound in); nothing else.
	Groups []int `json:"groups,omitempty"`
	// Binds appear inside the jail at their host paths, so the VMM's
	// command line needs no rewriting.
	Binds []Bind `json:"binds"`
	// Devices are device nodes bound in under /dev (e.g. "/dev/kvm").
	Devices []string `json:"devices"`
	// Cgroups are cgroup directories (host paths) the process joins
	// before it drops its privileges.
	Cgroups []string `json:"cgroups,omitempty"`
	Rlimits Rlimits  `json:"rlimits"`
	// KeepFDs is how many descriptors from 3 up stay open for the VMM
	// (its tap, its memory); every other one is closed on exec.
	KeepFDs int      `json:"keep_fds"`
	Program string   `json:"program"`
	Args    []string `json:"args"`
}

// Bind is one host path shown inside the jail.
type Bind struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable,omitempty"`
	// Exec allows running files from it (only /usr needs it).
	Exec bool `json:"exec,omitempty"`
}

// Rlimits are set (soft = hard) before the VMM starts. Core dumps are
// always off: a dump of a VMM holds guest memory, i.e. documents.
type Rlimits struct {
	NoFile uint64 `json:"nofile"`
	NProc  uint64 `json:"nproc"`
	FSize  uint64 `json:"fsize"`
}

// Encode is the helper's first argument.
func (s Spec) Encode() (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// Decode reads what Encode wrote, strictly.
func Decode(arg string) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(strings.NewReader(arg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("jail spec: %w", err)
	}
	return s, s.Validate()
}

// Validate refuses a spec that would not confine: root, relative or
// unclean paths, a jail without a root or a program.
func (s Spec) Validate() error {
	abs := func(what, p string) error {
		if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return fmt.Errorf("jail spec: %s %q must be a clean absolute path other than /", what, p)
		}
		return nil
	}
	switch {
	case s.ID == "":
		return fmt.Errorf("jail spec: no id")
	case s.UID <= 0 || s.GID <= 0:
		return fmt.Errorf("jail spec: uid %d / gid %d: the VMM never runs as root", s.UID, s.GID)
	case s.KeepFDs < 0 || s.KeepFDs > 16:
		return fmt.Errorf("jail spec: keep_fds %d out of range", s.KeepFDs)
	case s.Rlimits.NoFile == 0 || s.Rlimits.NProc == 0 || s.Rlimits.FSize == 0:
		return fmt.Errorf("jail spec: every rlimit must be set")
	}
	if err := abs("root", s.Root); err != nil {
		return err
	}
	if err := abs("program", s.Program); err != nil {
		return err
	}
	for _, g := range s.Groups {
		if g <= 0 {
			return fmt.Errorf("jail spec: supplementary group %d", g)
		}
	}
	for _, b := range s.Binds {
		if err := abs("bind", b.Path); err != nil {
			return err
		}
	}
	for _, d := range s.Devices {
		if err := abs("device", d); err != nil {
			return err
		}
		if filepath.Dir(d) != "/dev" {
			return fmt.Errorf("jail spec: device %q is not directly under /dev", d)
		}
	}
	for _, c := range s.Cgroups {
		if err := abs("cgroup", c); err != nil {
			return err
		}
	}
	return nil
}
