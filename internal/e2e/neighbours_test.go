package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
)

// netObjects is everything host-wide that one daemon's networking owns,
// in comparable form.
type netObjects struct {
	Namespaces []string // /run/netns entries, each with its table's rule count
	Links      []string // host links with their addresses
	Tables     []string // host nftables tables with their rule counts
}

func (o netObjects) empty() bool { return len(o.Namespaces)+len(o.Links)+len(o.Tables) == 0 }

// snapshotNet reads the objects named with instance.
func snapshotNet(t *testing.T, instance string) netObjects {
	t.Helper()
	var o netObjects
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "airlock-"+instance+"-") {
			o.Namespaces = append(o.Namespaces, fmt.Sprintf("%s rules=%d", e.Name(), nsRuleCount(t, "/run/netns/"+e.Name())))
		}
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		n := l.Attrs().Name
		if strings.HasPrefix(n, "al"+instance+"-") || n == "airlock-p"+instance {
			addrs, _ := netlink.AddrList(l, netlink.FAMILY_V4)
			var as []string
			for _, a := range addrs {
				as = append(as, a.IPNet.String())
			}
			sort.Strings(as)
			o.Links = append(o.Links, n+" "+strings.Join(as, ","))
		}
	}
	c, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := c.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Name == "airlock-"+instance {
			rules, _ := c.GetRules(tb, &nftables.Chain{Name: "forward", Table: tb})
			o.Tables = append(o.Tables, fmt.Sprintf("%s forward-rules=%d", tb.Name, len(rules)))
		}
	}
	sort.Strings(o.Namespaces)
	sort.Strings(o.Links)
	return o
}

func nsRuleCount(t *testing.T, path string) int {
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return -1
	}
	defer ns.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return -1
	}
	tb := &nftables.Table{Name: "airlock", Family: nftables.TableFamilyINet}
	rules, err := c.GetRules(tb, &nftables.Chain{Name: "forward", Table: tb})
	if err != nil {
		return -1
	}
	return len(rules)
}

// settledNet waits until a daemon's objects stop changing (its warm pool
// and slot prewarming have filled) and returns them.
func settledNet(t *testing.T, instance string) netObjects {
	t.Helper()
	prev := snapshotNet(t, instance)
	stableSince := time.Now()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		cur := snapshotNet(t, instance)
		if !reflect.DeepEqual(cur, prev) {
			prev, stableSince = cur, time.Now()
			continue
		}
		if time.Since(stableSince) > 3*time.Second {
			return cur
		}
	}
	t.Fatalf("networking of instance %s never settled: %+v", instance, prev)
	return prev
}

// TestNeighboursLeaveEachOtherAlone: two `serve --net` daemons on one
// host, and `go test -short` of the network packages run beside them,
// leave each other's namespaces, links and tables exactly as they were.
func TestNeighboursLeaveEachOtherAlone(t *testing.T) {
	e := getEnv(t)
	instA := netpool.InstanceFor(e.stateDir) // the default: derived from the state directory
	// A pool that does not adapt: A's own objects must not change while it
	// idles (a grown pool gives clones, and their slots, back over time).
	a := startDaemon(t, e, "--net", "--net-base-cidr", netpooltest.FreeBase(t, 24), "--proxy-addr", netpooltest.FreeAddr(t), "--net-prewarm", "2",
		"--warm-pool-max", "1")
	ca := a.client(t, tenantA)
	sa := createSandbox(t, ca, 600, map[string]string{"daemon": "a"})
	mustExec(t, sa, "echo a > /job/a")
	before := settledNet(t, instA)
	if len(before.Namespaces) == 0 || len(before.Links) == 0 || len(before.Tables) != 1 {
		t.Fatalf("daemon A (instance %s) shows no networking of its own: %+v", instA, before)
	}

	// A second daemon with its own state, run directory, instance, range
	// and proxy address comes and goes.
	e2 := e.withOwnState(t)
	instB := netpooltest.Instance() + "b"
	b := startDaemon(t, e2, "--net", "--net-instance", instB, "--net-base-cidr", netpooltest.FreeBase(t, 24),
		"--proxy-addr", netpooltest.FreeAddr(t), "--net-prewarm", "2")
	// Not createSandbox: B kills it itself when it stops (--kill-on-exit).
	sb, err := b.client(t, tenantA).CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 600})
	if err != nil {
		t.Fatalf("create in daemon B: %v", err)
	}
	mustExec(t, sb, "true")
	if got := snapshotNet(t, instB); got.empty() {
		t.Fatalf("daemon B (instance %s) shows no networking of its own", instB)
	}
	if got := snapshotNet(t, instA); !reflect.DeepEqual(got, before) {
		t.Errorf("daemon A's objects changed when daemon B started:\nbefore %+v\nafter  %+v", before, got)
	}
	b.stop(t)
	if left := snapshotNet(t, instB); !left.empty() {
		t.Errorf("daemon B left objects behind after it stopped: %+v", left)
	}

	// The network packages' fast tests, beside a live daemon.
	cmd := exec.Command("go", "test", "-short", "-count=1", "./internal/netpool/...", "./internal/sandbox/", "./internal/egress/")
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -short beside a live daemon: %v\n%s", err, out)
	}

	if got := snapshotNet(t, instA); !reflect.DeepEqual(got, before) {
		t.Errorf("daemon A's objects changed:\nbefore %+v\nafter  %+v", before, got)
	}
	if out := mustExec(t, sa, "cat /job/a"); out != "a\n" {
		t.Errorf("daemon A's sandbox after its neighbours: %q", out)
	}
	// A's sandbox still denies egress: its namespace table is intact and
	// the in-guest self-check passes.
	if _, err := sa.Probe(ctx(t)); err != nil {
		t.Errorf("egress self-check of daemon A's sandbox: %v", err)
	}
}
