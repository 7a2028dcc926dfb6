package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
)

// TestLease is the lease timing of the multi-process tests: heartbeat
// 0.5 s, TTL 3 s, grace 1 s, sweep 0.5 s, no fence-after (a node cut off
// fences when it is told, at heal).
var TestLease = lease.Config{Heartbeat: 500 * time.Millisecond, TTL: 3 * time.Second, Grace: time.Second,
	SweepInterval: 500 * time.Millisecond}

// ClusterOptions shape a Cluster.
type ClusterOptions struct {
	APIs, Nodes int
	// Proxies puts a FaultProxy on every path between a node and the
	// tier: the tier's calls to node i (NodeProc.ToNode) and node i's
	// calls to API j (NodeProc.ToTier[j]).
	Proxies bool
	// CreateTimeout and ReconcileAfter of the API processes; defaults 3 s
	// and 4 s.
	CreateTimeout, ReconcileAfter time.Duration
	// Standby adds a synchronous streaming standby of PG (Cluster.Standby)
	// and gives every process a DSN naming both, which connects to the
	// one that accepts writes: a failover test kills PG and promotes it.
	Standby bool
	// HostClass is the host class every node reports ("": none).
	HostClass string
	// NodeBlobs[i] is the blob store node i pulls published builds from
	// ("" or missing: it pulls none).
	NodeBlobs []string
}

// Cluster is a cluster of real processes on loopback: a private
// PostgreSQL, API processes (`airlock api`) and nodes (airlock-testnode:
// the real node agent over local machines), each with its own
// directories and ports. Every process, and every stand-in VMM a node
// started, is killed at cleanup.
type Cluster struct {
	t    testing.TB
	opts ClusterOptions
	// Dir holds everything the cluster writes.
	Dir string
	// PG is the cluster's database server; DSN its database; Store a
	// connection for the test's own checks. With ClusterOptions.Standby,
	// Standby streams from PG and DSN names both.
	PG, Standby *clustertest.Server
	DSN         string
	Store       *pgstore.Store
	// Token is the join token; TokenFile holds it.
	Token, TokenFile string
	// Key is an API key of tenant Tenant.
	Key   string
	APIs  []*APIProc
	Nodes []*NodeProc
	bin   binaries
}

// Tenant is the tenant of Cluster.Key.
const Tenant = "acme"

// APIProc is one `airlock api` process.
type APIProc struct {
	Public, Internal string // host:port, fixed across restarts
	Env              []string
	proc             *proc
}

// NodeProc is one test node process.
type NodeProc struct {
	ID, StateDir, Listen string
	ToNode               *FaultProxy   // nil without Proxies
	ToTier               []*FaultProxy // nil without Proxies
	proc                 *proc
}

// PID is the node process's pid (0 when not running).
func (n *NodeProc) PID() int { return n.proc.pid() }

// PID is the API process's pid (0 when not running).
func (a *APIProc) PID() int { return a.proc.pid() }

type proc struct {
	mu   sync.Mutex
	cmd  *exec.Cmd     // guarded by mu
	done chan struct{} // guarded by mu; closed when cmd has exited
}

func (p *proc) pid() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

type binaries struct{ airlock, testnode string }

var (
	buildOnce sync.Once
	built     binaries
	buildDir  string
	buildErr  error
)

// Main runs a test package's tests and then removes the binaries they
// built; call it from the package's TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// Binaries builds bin/airlock and airlock-testnode once per test process
// (the go build cache makes a rebuild cheap) and returns their paths.
func Binaries(t testing.TB) (airlock, testnode string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airlock-cluster-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
		goBin, err := exec.LookPath("go") // go test puts its own first on PATH
		if err != nil {
			buildErr = err
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{filepath.Join(dir, "airlock"), "./cmd/airlock"},
			{filepath.Join(dir, "airlock-testnode"), "./internal/cluster/clustertest/cmd/airlock-testnode"},
		} {
			cmd := exec.Command(goBin, "build", "-o", b.out, b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v: %s", b.pkg, err, out)
				return
			}
		}
		built = binaries{airlock: filepath.Join(dir, "airlock"), testnode: filepath.Join(dir, "airlock-testnode")}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built.airlock, built.testnode
}

// FreeAddr returns a loopback address with a port free now, chosen below
// the kernel's ephemeral range (net.ipv4.ip_local_port_range): a port the
// test releases and hands to a process it starts must not be taken in
// between by some process's outgoing connection or ":0" listener, which
// the kernel only ever gives ports inside that range. Ports it handed out
// before (in this process) are not handed out again.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo, hi := reservedPorts()
	portsHandedOut.Lock()
	defer portsHandedOut.Unlock()
	for range 200 {
		port := lo + rand.IntN(hi-lo+1)
		if portsHandedOut.m[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		portsHandedOut.m[port] = true
		return l.Addr().String()
	}
	t.Fatalf("multiproc: no free loopback port in %d-%d", lo, hi)
	return ""
}

var portsHandedOut = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// reservedPorts is the range FreeAddr picks from: up to 12,000 ports just
// under the ephemeral range's start (32768 on Linux by default).
func reservedPorts() (lo, hi int) {
	first := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 2048 {
				first = v
			}
		}
	}
	return max(1024, first-12000), first - 1
}

// StartCluster starts a private PostgreSQL, o.APIs API processes and
// o.Nodes nodes, and waits until every API process sees every node.
func StartCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	if o.CreateTimeout == 0 {
		o.CreateTimeout = 3 * time.Second
	}
	if o.ReconcileAfter == 0 {
		o.ReconcileAfter = o.CreateTimeout + time.Second
	}
	airlock, testnode := Binaries(t)
	c := &Cluster{t: t, opts: o, bin: binaries{airlock, testnode}}
	var err error
	if c.Dir, err = os.MkdirTemp("", "airlock-cluster-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	c.PG = clustertest.Private(t)
	db := c.PG.CreateDatabase(t)
	c.DSN = c.PG.DSN(db)
	if o.Standby {
		c.Standby = c.PG.NewStandby(t)
		if err := c.PG.RequireSync(); err != nil {
			t.Fatal(err)
		}
		c.DSN = clustertest.MultiHostDSN(db, c.PG, c.Standby)
	}
	c.Token = "join-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-token"
	c.TokenFile = filepath.Join(c.Dir, "token")
	if err := os.WriteFile(c.TokenFile, []byte(c.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range o.APIs {
		c.APIs = append(c.APIs, &APIProc{Public: FreeAddr(t), Internal: FreeAddr(t)})
		c.StartAPI(i)
	}
	if c.Store, err = pgstore.Open(ctx, c.DSN, pgstore.Options{Lease: TestLease}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Store.Close)
	if c.Key, _, err = c.Store.CreateKey(ctx, Tenant, "cluster-test"); err != nil {
		t.Fatal(err)
	}
	for i := range o.Nodes {
		n := &NodeProc{ID: fmt.Sprintf("node%d", i), StateDir: filepath.Join(c.Dir, fmt.Sprintf("node%d", i)), Listen: FreeAddr(t)}
		if o.Proxies {
			if n.ToNode, err = NewFaultProxy(n.Listen); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(n.ToNode.Close)
			for _, a := range c.APIs {
				p, err := NewFaultProxy(a.Internal)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				n.ToTier = append(n.ToTier, p)
			}
		}
		c.Nodes = append(c.Nodes, n)
		c.StartNode(i)
	}
	c.WaitView(func(v []nodewire.ViewNode) bool { return countReady(v) == o.Nodes })
	return c
}

func countReady(v []nodewire.ViewNode) int {
	n := 0
	for _, x := range v {
		if x.State == string(lease.Ready) {
			n++
		}
	}
	return n
}

// start runs bin with args, output to log, and returns it; ready, when
// set, is read from the first stdout line.
func (c *Cluster) start(name, bin string, args, env []string, ready bool) (*proc, map[string]any) {
	c.t.Helper()
	logf, err := os.OpenFile(filepath.Join(c.Dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "AIRLOCK_CLUSTER_TEST="+c.Dir), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	var line map[string]any
	sc := bufio.NewScanner(out)
	if ready {
		if !sc.Scan() || json.Unmarshal(sc.Bytes(), &line) != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			c.t.Fatalf("%s did not start (%v); its log %s ends:\n%s", name, cmd.ProcessState, logf.Name(), logTail(logf.Name(), 2048))
		}
	}
	go func() {
		for sc.Scan() {
		}
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, line
}

// logTail is the last n bytes of the file at path (CI keeps the test's
// output, not its temporary directories).
func logTail(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, int64(len(b))-n):])
}

// StartAPI starts API process i (again: a running one is killed first),
// with env as its environment (or the last one given), and waits until
// it is ready.
func (c *Cluster) StartAPI(i int, env ...string) {
	c.t.Helper()
	a := c.APIs[i]
	if len(env) > 0 {
		a.Env = env
	}
	if a.proc != nil && !isDone(a.proc.done) {
		a.proc.kill(syscall.SIGKILL) // its ports are the new one's
	}
	args := []string{"api", "--dsn", c.DSN, "--listen", a.Public, "--internal-listen", a.Internal,
		"--cluster-token-file", c.TokenFile, "--log-level", "warn",
		"--heartbeat", TestLease.Heartbeat.String(), "--lease-ttl", TestLease.TTL.String(),
		"--lease-grace", TestLease.Grace.String(), "--sweep-interval", TestLease.SweepInterval.String(), "--fence-after", "0",
		"--create-timeout", c.opts.CreateTimeout.String(), "--reconcile-after", c.opts.ReconcileAfter.String()}
	a.proc, _ = c.start(fmt.Sprintf("api%d", i), c.bin.airlock, args, a.Env, false)
	c.waitFor(fmt.Sprintf("api%d ready", i), func() bool {
		if isDone(a.proc.done) {
			c.t.Fatalf("api%d exited before it was ready; its log ends:\n%s", i, logTail(filepath.Join(c.Dir, fmt.Sprintf("api%d.log", i)), 2048))
		}
		res, err := http.Get("http://" + a.Public + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// StartNode starts node i (again: a running one is killed first) and
// waits until it has printed that it listens.
func (c *Cluster) StartNode(i int) {
	c.t.Helper()
	n := c.Nodes[i]
	if n.proc != nil && !isDone(n.proc.done) {
		n.proc.kill(syscall.SIGKILL)
	}
	tier := make([]string, len(c.APIs))
	for j, a := range c.APIs {
		tier[j] = "http://" + a.Internal
		if n.ToTier != nil {
			tier[j] = "http://" + n.ToTier[j].Addr()
		}
	}
	args := []string{"-state-dir", n.StateDir, "-api", strings.Join(tier, ","), "-token-file", c.TokenFile,
		"-node-id", n.ID, "-listen", n.Listen}
	if n.ToNode != nil {
		args = append(args, "-advertise", n.ToNode.Addr())
	}
	if c.opts.HostClass != "" {
		args = append(args, "-host-class", c.opts.HostClass)
	}
	if i < len(c.opts.NodeBlobs) && c.opts.NodeBlobs[i] != "" {
		args = append(args, "-blobs", c.opts.NodeBlobs[i])
	}
	n.proc, _ = c.start(n.ID, c.bin.testnode, args, nil, true)
}

// Kill sends sig to the process and, for SIGKILL, waits until it is gone.
func (p *proc) kill(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		<-done
	}
}

// SignalNode sends sig to node i (SIGKILL waits until it is gone).
func (c *Cluster) SignalNode(i int, sig syscall.Signal) { c.Nodes[i].proc.kill(sig) }

// SignalAPI sends sig to API process i (SIGKILL waits until it is gone).
func (c *Cluster) SignalAPI(i int, sig syscall.Signal) { c.APIs[i].proc.kill(sig) }

// APIExited is closed once API process i's current incarnation exited.
func (c *Cluster) APIExited(i int) <-chan struct{} { return c.APIs[i].proc.done }

// Client is a Go client of API process i, as a tenant uses one.
func (c *Cluster) Client(i int, opts ...client.Option) *client.Client {
	cl, err := client.New("http://"+c.APIs[i].Public, c.Key, opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// NodeClient is a Go client straight to node i (bypassing the tier),
// with an assertion minted as the tier would: for measuring what the
// tier costs. hdr are extra header name/value pairs.
func (c *Cluster) NodeClient(i int, hdr ...string) *client.Client {
	c.t.Helper()
	ctx := context.Background()
	master, err := c.Store.ClusterSecret(ctx, "node-credentials-v1")
	if err != nil {
		c.t.Fatal(err)
	}
	n := c.Nodes[i]
	var epoch int64
	nodes, err := c.Store.ListNodes(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, x := range nodes {
		if x.ID == n.ID {
			epoch = x.Epoch
		}
	}
	a := nodewire.Assert(nodewire.AssertKey(master, n.ID, epoch), n.ID, epoch, Tenant, time.Now().Add(nodewire.AssertionTTL))
	opts := []client.Option{client.WithRetries(0)}
	for k := 0; k+1 < len(hdr); k += 2 {
		opts = append(opts, client.WithHeader(hdr[k], hdr[k+1]))
	}
	cl, err := client.New("http://"+n.Listen, a, opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// View is what API process i sees of the nodes.
func (c *Cluster) View(i int) ([]nodewire.ViewNode, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+c.APIs[i].Internal+nodewire.PathView, nil)
	req.Header.Set("Authorization", "Bearer "+c.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var v nodewire.View
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		return nil, err
	}
	return v.Nodes, nil
}

// WaitView waits until every running API process's view satisfies ok.
func (c *Cluster) WaitView(ok func([]nodewire.ViewNode) bool) {
	c.t.Helper()
	c.waitFor("API views", func() bool {
		for i := range c.APIs {
			if c.APIs[i].proc == nil || isDone(c.APIs[i].proc.done) {
				continue
			}
			v, err := c.View(i)
			if err != nil || !ok(v) {
				return false
			}
		}
		return true
	})
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitFor polls cond every 20 ms for up to a minute.
func (c *Cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s (logs in %s)", what, c.Dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitFor is waitFor for tests.
func (c *Cluster) WaitFor(what string, cond func() bool) { c.t.Helper(); c.waitFor(what, cond) }

// close kills every process and VMM and removes the directory (kept when
// the test failed, for its logs).
func (c *Cluster) close() {
	for _, n := range c.Nodes {
		if n.proc != nil {
			n.proc.kill(syscall.SIGCONT)
			n.proc.kill(syscall.SIGKILL)
		}
	}
	for _, a := range c.APIs {
		if a.proc != nil {
			a.proc.kill(syscall.SIGKILL)
		}
	}
	for _, pid := range c.VMMs() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if !c.t.Failed() {
		os.RemoveAll(c.Dir)
	} else {
		c.t.Logf("cluster logs kept in %s", c.Dir)
	}
}

// VMMs returns the pids of every live stand-in VMM this cluster's nodes
// started: processes that carry the cluster's environment marker and are
// not zombies, wherever their state directory went.
func (c *Cluster) VMMs() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	marker := []byte("AIRLOCK_CLUSTER_TEST=" + c.Dir + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(comm)) != "sleep" {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !strings.Contains(string(env), string(marker)) {
			continue
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			s := string(st)
			if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) && s[i+2] == 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}
