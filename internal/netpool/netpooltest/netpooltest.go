//go:build linux

// Package netpooltest gives tests host-wide network names of their own, so
// a test run never touches a live daemon's namespaces, links or tables, nor
// another test process's: an instance and namespace names derived from the
// process id, a base range that overlaps nothing on the host, and a sweep
// of what dead test processes left behind.
//
// Ownership is recorded, not guessed: the first call writes
// /run/airlock-test-net-<pid> holding the instance, and Sweep touches only
// instances whose recording process is gone.
package netpooltest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

const (
	recordPrefix = "/run/airlock-test-net-"
	netnsDir     = "/run/netns"
)

var once sync.Once

// Instance is this process's netpool instance: "t" and the pid in base 36
// (at most 5 characters, as netpool requires).
func Instance() string {
	pid := os.Getpid() % (36 * 36 * 36 * 36)
	inst := "t" + strconv.FormatInt(int64(pid), 36)
	once.Do(func() {
		sweep()
		_ = os.WriteFile(recordPrefix+strconv.Itoa(os.Getpid()), []byte(inst), 0o600)
	})
	return inst
}

// NetnsName is a /run/netns name for a test's own namespace (a fake host,
// a stand-in guest), unique to this process.
func NetnsName(suffix string) string {
	Instance() // records ownership before anything is created
	return fmt.Sprintf("airlock-test-%d-%s", os.Getpid(), suffix)
}

// Test ranges: 10.128.0.0/10 for slot bases and 10.192.0.0/16 for proxy
// addresses, both clear of the daemon defaults (10.200.0.0/16 and
// 10.199.255.1).
var (
	testBases   = netip.MustParsePrefix("10.128.0.0/10")
	testProxies = netip.MustParsePrefix("10.192.0.0/16")
)

// FreeBase returns a /bits IPv4 range under 10.128.0.0/10 that overlaps no
// address in the calling thread's network namespace, starting from a
// pid-derived offset so concurrent test processes pick different ones.
func FreeBase(tb testing.TB, bits int) string {
	tb.Helper()
	return free(tb, testBases, bits).String()
}

// FreeAddr returns an IPv4 address under 10.192.0.0/16 that no address in
// the calling thread's network namespace covers (for a test daemon's
// egress proxy).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	return free(tb, testProxies, 32).Addr().String()
}

// handedOut are the ranges free gave out in this process: a daemon given
// one may not have put an address in it yet when the next is asked for.
var handedOut struct {
	sync.Mutex
	list []netip.Prefix
}

func free(tb testing.TB, within netip.Prefix, bits int) netip.Prefix {
	tb.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if bits < within.Bits() || bits > 32 {
		tb.Fatalf("netpooltest: /%d does not fit in %s", bits, within)
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		tb.Fatalf("netpooltest: list addresses: %v", err)
	}
	used := slices.Clone(handedOut.list)
	for _, a := range addrs {
		if ap, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			ones, _ := a.Mask.Size()
			used = append(used, netip.PrefixFrom(ap, ones).Masked())
		}
	}
	n := 1 << (bits - within.Bits())
	start := os.Getpid() % n
	b4 := within.Addr().As4()
	base := uint32(b4[0])<<24 | uint32(b4[1])<<16 | uint32(b4[2])<<8 | uint32(b4[3])
	for k := 0; k < n; k++ {
		v := base | uint32((start+k)%n)<<(32-bits)
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits)
		if bits == 32 && (v&0xff == 0 || v&0xff == 0xff) {
			continue // no network or broadcast-looking proxy addresses
		}
		taken := false
		for _, u := range used {
			if u.Overlaps(cand) {
				taken = true
				break
			}
		}
		if !taken {
			handedOut.list = append(handedOut.list, cand)
			return cand
		}
	}
	tb.Fatalf("netpooltest: no free /%d in %s", bits, within)
	return netip.Prefix{}
}

// sweep removes the namespaces, links and host tables of test instances
// whose process is gone (a test binary that crashed or was killed).
func sweep() {
	records, _ := filepath.Glob(recordPrefix + "*")
	for _, r := range records {
		pid, err := strconv.Atoi(strings.TrimPrefix(r, recordPrefix))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == nil {
			continue
		}
		b, err := os.ReadFile(r)
		inst := strings.TrimSpace(string(b))
		if err != nil || inst == "" {
			continue
		}
		sweepInstance(inst, pid)
		os.Remove(r)
	}
}

func sweepInstance(inst string, pid int) {
	ents, _ := os.ReadDir(netnsDir)
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "airlock-"+inst+"-s") || strings.HasPrefix(n, fmt.Sprintf("airlock-test-%d-", pid)) {
			p := filepath.Join(netnsDir, n)
			_ = unix.Unmount(p, unix.MNT_DETACH)
			_ = os.Remove(p)
		}
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, "al"+inst+"-") {
			_ = netlink.LinkDel(l)
		}
	}
	deleteHostTable("airlock-" + inst)
}
