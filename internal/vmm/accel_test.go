package vmm

import "testing"

func TestDetectAccel(t *testing.T) {
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	for _, tc := range []struct {
		name    string
		cpuinfo string
		exists  func(string) bool
		opens   bool
		want    Accel
	}{
		{"no flags (PVM host)", "flags\t: fpu sse2 hypervisor\n", yes, true, AccelTCG},
		{"vmx without module", "flags\t: fpu vmx\n", no, true, AccelTCG},
		{"vmx with module, kvm closed", "flags\t: fpu vmx\n", yes, false, AccelTCG},
		{"vmx with module", "flags\t: fpu vmx\n", yes, true, AccelKVM},
		{"svm with module", "flags\t: fpu svm\n", yes, true, AccelKVM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detectAccel(hostProbe{cpuinfo: tc.cpuinfo, exists: tc.exists, kvmOpens: func() bool { return tc.opens }})
			if got.Accel != tc.want || got.Reason == "" {
				t.Fatalf("got %+v, want %s with a reason", got, tc.want)
			}
		})
	}
}

func TestChooseAccelOverride(t *testing.T) {
	if c, err := ChooseAccel("tcg"); err != nil || c.Accel != AccelTCG {
		t.Fatalf("tcg override: %+v %v", c, err)
	}
	if c, err := ChooseAccel("kvm"); err != nil || c.Accel != AccelKVM {
		t.Fatalf("kvm override: %+v %v", c, err)
	}
	if _, err := ChooseAccel("xen"); err == nil {
		t.Fatal("unknown accel accepted")
	}
}
