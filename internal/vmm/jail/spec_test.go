package jail

import (
	"strings"
	"testing"
)

func goodSpec() Spec {
	return Spec{ID: "sbx-1", Root: "/run/airlock/sbx-1/jail-root", UID: 1610612737, GID: 1610612737,
		Binds: []Bind{{Path: "/run/airlock/sbx-1", Writable: true}}, Devices: []string{"/dev/kvm"},
		Rlimits: Rlimits{NoFile: 1024, NProc: 256, FSize: 1 << 28}, Program: "/usr/bin/qemu-system-x86_64"}
}

// TestSpecRoundTrip: what the host encodes the helper decodes unchanged.
func TestSpecRoundTrip(t *testing.T) {
	s := goodSpec()
	s.Args = []string{"-M", "microvm"}
	arg, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(arg)
	if err != nil || got.Program != s.Program || len(got.Args) != 2 || got.Binds[0] != s.Binds[0] {
		t.Fatalf("Decode(Encode(s)) = %+v, %v", got, err)
	}
}

// TestSpecRefusesWhatWouldNotConfine: a jail as root, a root of /, relative
// or unclean paths, devices outside /dev, unset rlimits, unknown fields.
func TestSpecRefusesWhatWouldNotConfine(t *testing.T) {
	for name, mutate := range map[string]func(*Spec){
		"uid 0":          func(s *Spec) { s.UID = 0 },
		"gid 0":          func(s *Spec) { s.GID = 0 },
		"root /":         func(s *Spec) { s.Root = "/" },
		"relative root":  func(s *Spec) { s.Root = "run/x" },
		"unclean bind":   func(s *Spec) { s.Binds = []Bind{{Path: "/run/../etc"}} },
		"device outside": func(s *Spec) { s.Devices = []string{"/tmp/kvm"} },
		"no nofile":      func(s *Spec) { s.Rlimits.NoFile = 0 },
		"group 0":        func(s *Spec) { s.Groups = []int{0} },
		"no id":          func(s *Spec) { s.ID = "" },
		"many fds":       func(s *Spec) { s.KeepFDs = 100 },
	} {
		s := goodSpec()
		mutate(&s)
		if _, err := s.Encode(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	arg, _ := goodSpec().Encode()
	if _, err := Decode(strings.Replace(arg, `{"id"`, `{"privileged":true,"id"`, 1)); err == nil {
		t.Error("an unknown field was accepted")
	}
}
