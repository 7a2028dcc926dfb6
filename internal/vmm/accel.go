package vmm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// AccelChoice is the acceleration picked for this host and why.
type AccelChoice struct {
	Accel  Accel
	Reason string
}

// hostProbe is what accel detection reads, injectable for tests.
type hostProbe struct {
	cpuinfo  string
	exists   func(string) bool
	kvmOpens func() bool
}

func realProbe() hostProbe {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return hostProbe{
		cpuinfo: string(b),
		exists:  func(p string) bool { _, err := os.Stat(p); return err == nil },
		kvmOpens: func() bool {
			f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
			if err != nil {
				return false
			}
			f.Close()
			return true
		},
	}
}

// DetectAccel picks KVM only where it can run a normal guest: the CPU
// advertises vmx or svm, the matching kvm_intel/kvm_amd module is loaded,
// and /dev/kvm opens. /dev/kvm alone is not enough: some hosts expose a
// paravirtual KVM on which a stock guest kernel hangs in early boot.
func DetectAccel() AccelChoice { return detectAccel(realProbe()) }

func detectAccel(p hostProbe) AccelChoice {
	flags := cpuFlags(p.cpuinfo)
	var mod string
	switch {
	case flags["vmx"]:
		mod = "kvm_intel"
	case flags["svm"]:
		mod = "kvm_amd"
	default:
		return AccelChoice{AccelTCG, "CPU has no vmx/svm flag (no usable hardware virtualisation)"}
	}
	if !p.exists("/sys/module/" + mod) {
		return AccelChoice{AccelTCG, fmt.Sprintf("CPU has virtualisation but %s is not loaded", mod)}
	}
	if !p.kvmOpens() {
		return AccelChoice{AccelTCG, "/dev/kvm cannot be opened"}
	}
	return AccelChoice{AccelKVM, fmt.Sprintf("CPU virtualisation with %s and /dev/kvm", mod)}
}

// ChooseAccel resolves an override ("", "auto", "kvm", "tcg").
func ChooseAccel(override string) (AccelChoice, error) {
	switch override {
	case "", "auto":
		return DetectAccel(), nil
	case "kvm":
		return AccelChoice{AccelKVM, "forced by --accel"}, nil
	case "tcg":
		return AccelChoice{AccelTCG, "forced by --accel"}, nil
	}
	return AccelChoice{}, fmt.Errorf("unknown acceleration %q (want auto, kvm or tcg)", override)
}

func cpuFlags(cpuinfo string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				out[f] = true
			}
			return out
		}
	}
	return out
}

// HostTSCkHz reads the host TSC frequency in kHz from /proc/cpuinfo's
// "cpu MHz", or 0 if unknown. Passed to the guest as tsc_early_khz: without
// it about one cold boot in ten under emulation hangs calibrating the TSC
// against the PIT.
func HostTSCkHz() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || mhz <= 0 {
				return 0
			}
			return int(mhz * 1000)
		}
	}
	return 0
}
