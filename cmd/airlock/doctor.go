package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/vmm"
	"github.com/airlock-dev/airlock/internal/vmm/jail"
	"github.com/airlock-dev/airlock/internal/vmm/qemu"
)

// jailCheck is what the jail would be on this host, without making it.
func jailCheck() (jail.Report, error) {
	helper, err := image.FindBinary("airlock-jailer", "AIRLOCK_JAILER")
	if err != nil {
		return jail.Report{}, err
	}
	return jail.Check(jail.Config{Helper: helper, Instance: "<instance>"})
}

func newDoctorCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Report what this host can run: QEMU, acceleration, kernel, cgroups, tun, nftables",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			failed := doctor(cmd.Context(), cmd.OutOrStdout(), g)
			if failed > 0 {
				return fmt.Errorf("%d required check(s) failed", failed)
			}
			return nil
		},
	}
}

// doctor prints one line per check and returns how many required ones failed.
func doctor(ctx context.Context, out io.Writer, g *globalFlags) int {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	failed := 0
	check := func(name string, ok, required bool, detail string) {
		mark := "ok"
		if !ok {
			mark = "MISSING"
			if required {
				failed++
			} else {
				mark = "warn"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, mark, detail)
	}
	checkVMM(check, g)
	checkGuestParts(ctx, check, g)
	checkHostFeatures(check)
	return failed
}

// checkFunc reports one doctor check.
type checkFunc func(name string, ok, required bool, detail string)

// checkVMM checks QEMU, the jail, the accelerator and the TSC hint.
func checkVMM(check checkFunc, g *globalFlags) {
	if d, err := qemu.New(qemu.Options{Unjailed: "version check"}); err != nil {
		check("qemu", false, true, err.Error())
	} else {
		check("qemu", true, true, d.Path()+" "+d.Version()+", seccomp sandbox "+jail.Seccomp)
	}
	if g.jail == "off" {
		check("jail", false, false, "OFF by the operator (--jail=off): every VMM runs as this user in the host's mount, pid, ipc and uts namespaces, without cgroup limits")
	} else if rep, err := jailCheck(); err != nil {
		check("jail", false, true, err.Error()+" (or pass --jail=off to run VMMs unconfined)")
	} else {
		check("jail", true, true, fmt.Sprintf("each VMM: uid %s; namespaces %s; %s; %s", rep.UIDs, strings.Join(rep.Namespaces, ", "), rep.Privileges, rep.Limits))
		for _, c := range []string{"memory", "pids", "cpu"} {
			check("jail cgroup "+c, true, true, rep.Cgroups[c])
		}
	}
	accel, err := vmm.ChooseAccel(g.accel)
	if err != nil {
		check("accel", false, true, err.Error())
	} else {
		check("accel", true, true, fmt.Sprintf("%s: %s", accel.Accel, accel.Reason))
	}
	if khz := vmm.HostTSCkHz(); khz > 0 {
		check("tsc hint", true, false, fmt.Sprintf("tsc_early_khz=%d", khz))
	} else {
		check("tsc hint", false, false, "cpu MHz not found in /proc/cpuinfo")
	}
}

// checkGuestParts checks what a guest boots from and how images are built:
// the kernel (apt and cache), the agent, busybox, mkfs.ext4, mmdebstrap.
func checkGuestParts(ctx context.Context, check checkFunc, g *globalFlags) {
	cacheDir := g.cacheDir
	if cacheDir == "" {
		cacheDir = image.DefaultCacheDir()
	}
	if pkg, ver, err := image.ResolveKernelPackage(ctx); err != nil {
		check("kernel (apt)", false, false, err.Error())
	} else {
		check("kernel (apt)", true, false, fmt.Sprintf("%s resolves to %s %s", image.KernelMetaPackage, pkg, ver))
	}
	if k, err := image.NewestCachedKernel(cacheDir); err != nil {
		check("kernel cached", false, false, err.Error()+" (fetched on first run)")
	} else {
		check("kernel cached", true, false, fmt.Sprintf("%s %s in %s", k.Release, k.Version, k.Dir))
	}
	if a, err := image.FindAgent(); err != nil {
		check("agent", false, true, err.Error())
	} else {
		check("agent", true, true, a)
	}
	_, bbErr := os.Stat(image.BusyboxPath)
	check("busybox-static", bbErr == nil, true, image.BusyboxPath)
	_, mkfsErr := exec.LookPath("mkfs.ext4")
	check("mkfs.ext4", mkfsErr == nil, true, "e2fsprogs, packs root images")
	_, mmErr := exec.LookPath("mmdebstrap")
	check("mmdebstrap", mmErr == nil, false, "builds template root filesystems")
}

// checkHostFeatures checks cgroup v2, tun, nftables and root.
func checkHostFeatures(check checkFunc) {
	cg := "none"
	for _, p := range []string{"/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/unified/cgroup.controllers"} {
		if ctrl, err := os.ReadFile(p); err == nil {
			cg = fmt.Sprintf("%s (controllers: %s)", p, strings.TrimSpace(string(ctrl)))
			break
		}
	}
	check("cgroup v2", cg != "none", false, cg)
	_, tunErr := os.Stat("/dev/net/tun")
	check("tun", tunErr == nil, false, "/dev/net/tun, for sandbox networking")
	_, nftErr := os.Stat("/proc/net/netfilter") // present when netfilter is built in or loaded
	nft := nftErr == nil
	if b, err := os.ReadFile("/proc/modules"); err == nil && strings.Contains(string(b), "nf_tables") {
		nft = true
	}
	check("nftables", nft, false, "kernel netfilter, for egress policy")
	check("running as root", os.Geteuid() == 0, false, "namespaces, taps and nftables need root")
}
