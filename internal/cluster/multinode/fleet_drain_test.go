package multinode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

// airlockCLI runs the airlock binary against c's database and returns
// its output and exit code.
func airlockCLI(t *testing.T, c *multiproc.Cluster, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	bin, _ := multiproc.Binaries(t)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AIRLOCK_CLUSTER_DSN="+c.DSN)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("airlock %v: %v", args, err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// bg is a CLI run in the background whose output lines are collected.
type bg struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func startCLI(t *testing.T, c *multiproc.Cluster, args ...string) *bg {
	t.Helper()
	bin, _ := multiproc.Binaries(t)
	b := &bg{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	b.cmd.Env = append(os.Environ(), "AIRLOCK_CLUSTER_DSN="+c.DSN)
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !isClosed(b.done) {
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
		}
		_ = b.cmd.Wait()
		close(b.done)
	}()
	return b
}

func (b *bg) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func (b *bg) printed(line string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		if l == line {
			return true
		}
	}
	return false
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// liveOn counts the catalog's live sandboxes on node id.
func liveOn(t *testing.T, c *multiproc.Cluster, id string) int {
	t.Helper()
	n, err := c.Store.NodeStatusOf(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return n.Live
}

// A drained node with 10 running sandboxes gets none of 20 creates;
// `node drain --wait` prints them ending and returns exactly when the
// last one ended; `node ls` shows it; undrain brings placement back.
func TestFleetNodeDrain(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 1, Nodes: 2})
	ctx := context.Background()
	cl := c.Client(0)
	target := c.Nodes[0].ID
	var mine []*client.Sandbox
	for tries := 0; len(mine) < 10; tries++ {
		if tries == 60 {
			t.Fatalf("60 creates put only %d sandboxes on %s", len(mine), target)
		}
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if sb.Node == target {
			mine = append(mine, sb)
		}
	}
	if got := liveOn(t, c, target); got != 10 {
		t.Fatalf("%s holds %d live sandboxes, want 10", target, got)
	}

	drain := startCLI(t, c, "node", "drain", target, "--wait", "--timeout", "5m")
	c.WaitFor("drain started", func() bool { return drain.printed("node " + target + ": 10 live sandboxes") })

	// A --wait that times out says so and exits non-zero (125: an
	// airlock error, as every command's).
	if _, stderr, code := airlockCLI(t, c, "node", "drain", target, "--wait", "--timeout", "300ms"); code != 125 || !strings.Contains(stderr, "[deadline_exceeded]") {
		t.Errorf("drain --wait --timeout 300ms: exit %d, stderr %q; want 125 and deadline_exceeded", code, stderr)
	}

	const creates = 20
	var others []*client.Sandbox
	for range creates {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create while %s drains: %v", target, err)
		}
		if sb.Node == target {
			t.Errorf("sandbox %s placed on draining node %s", sb.ID, target)
		}
		others = append(others, sb)
	}
	t.Logf("DRAIN %d creates while %s drained: 0 placed on it", creates, target)

	out, _, code := airlockCLI(t, c, "node", "ls", "--json")
	if code != 0 {
		t.Fatalf("node ls --json: exit %d", code)
	}
	var ls struct {
		Nodes []nodeJSONView `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatalf("node ls --json: %v: %s", err, out)
	}
	checkLs(t, ls.Nodes, target, len(others))
	table, _, _ := airlockCLI(t, c, "node", "ls")
	t.Logf("node ls:\n%s", table)

	for i, sb := range mine {
		if isClosed(drain.done) {
			t.Fatalf("drain --wait returned with %d sandboxes still live: %s", 10-i, drain.output())
		}
		if i == len(mine)-1 {
			// The last one: the wait must still be on, at one.
			c.WaitFor("drain at 1", func() bool { return drain.printed("node " + target + ": 1 live sandbox") })
			if isClosed(drain.done) {
				t.Fatalf("drain --wait returned before the last sandbox ended: %s", drain.output())
			}
		}
		if err := sb.Kill(ctx); err != nil {
			t.Fatalf("kill %s: %v", sb.ID, err)
		}
	}
	<-drain.done
	if code := drain.cmd.ProcessState.ExitCode(); code != 0 || !drain.printed("node "+target+" drained") {
		t.Fatalf("drain --wait: exit %d, output:\n%s", code, drain.output())
	}
	if got := liveOn(t, c, target); got != 0 {
		t.Fatalf("drain --wait returned with %d live on %s", got, target)
	}
	t.Logf("drain --wait output:\n%s", drain.output())

	if out, _, code := airlockCLI(t, c, "node", "undrain", target); code != 0 || !strings.Contains(out, "ready") {
		t.Fatalf("undrain: exit %d: %s", code, out)
	}
	// The API process learns it from the node's next heartbeat.
	c.WaitView(func(v []nodewireView) bool { return readyIn(v, target) })
	back := 0
	for range 10 {
		sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
		if err != nil {
			t.Fatalf("create after undrain: %v", err)
		}
		if sb.Node == target {
			back++
		}
	}
	if back == 0 {
		t.Errorf("no create of 10 placed on %s after undrain", target)
	}
	t.Logf("UNDRAIN %d of 10 creates placed on %s (emptied; %s holds %d)", back, target, c.Nodes[1].ID, liveOn(t, c, c.Nodes[1].ID))
	if _, stderr, code := airlockCLI(t, c, "node", "drain", "no-such-node"); code == 0 || !strings.Contains(stderr, "[failed_precondition]") {
		t.Errorf("drain of an unknown node: exit %d, %q", code, stderr)
	}
	killAll(t, c)
	check(t, c, "drain", 0)
}

type nodeJSONView struct {
	ID       string  `json:"id"`
	State    string  `json:"state"`
	Epoch    int64   `json:"epoch"`
	Address  string  `json:"address"`
	Running  int     `json:"running_sandboxes"`
	LeaseS   float64 `json:"lease_left_seconds"`
	HBAgeS   float64 `json:"heartbeat_age_seconds"`
	Capacity struct {
		Slots int `json:"slots"`
	} `json:"capacity"`
}

func checkLs(t *testing.T, nodes []nodeJSONView, drained string, others int) {
	t.Helper()
	if len(nodes) != 2 {
		t.Fatalf("node ls: %d nodes, want 2", len(nodes))
	}
	for _, n := range nodes {
		want, state := others, "ready"
		if n.ID == drained {
			want, state = 10, "draining"
		}
		if n.State != state || n.Epoch < 1 || n.Address == "" || n.Capacity.Slots == 0 || n.LeaseS <= 0 || n.HBAgeS < 0 {
			t.Errorf("node ls: %+v, want state %s, epoch, address, capacity, a lease", n, state)
		}
		if n.ID == drained && n.Running != want {
			t.Errorf("node ls: %s runs %d, want %d", n.ID, n.Running, want)
		}
	}
}
