package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/netpool/netpooltest"
	"github.com/airlock-dev/airlock/internal/template"
)

// tier is a cluster API started for a test: `airlock api` on a private
// database, the env's template published to a file:// blob store, and a
// client with a fresh tenant key.
type tier struct {
	internal, tokenFile, blobURL string
	cl                           *client.Client
}

// startTier starts `airlock api` and publishes the env's template.
func startTier(t *testing.T, e *env) *tier {
	t.Helper()
	dsn := clustertest.Private(t).Database(t)
	dir := t.TempDir()
	tr := &tier{tokenFile: filepath.Join(dir, "join-token"), blobURL: "file://" + filepath.Join(dir, "blobs")}
	if err := os.WriteFile(tr.tokenFile, []byte(uniq("join-token-")+"-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	public := multiproc.FreeAddr(t)
	tr.internal = multiproc.FreeAddr(t)
	apiLog, err := os.Create(filepath.Join(dir, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	api := exec.Command(e.bin, "api", "--dsn", dsn, "--listen", public, "--internal-listen", tr.internal,
		"--cluster-token-file", tr.tokenFile, "--heartbeat", "500ms", "--lease-ttl", "5s", "--lease-grace", "2s",
		"--sweep-interval", "500ms", "--fence-after", "0", "--create-timeout", "3m")
	api.Stdout, api.Stderr = apiLog, apiLog
	api.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs after the nodes' cleanups: they stop
	// while the tier still answers.
	t.Cleanup(func() {
		_ = api.Process.Signal(syscall.SIGTERM)
		_ = api.Wait()
		apiLog.Close()
		if t.Failed() {
			b, _ := os.ReadFile(apiLog.Name())
			t.Logf("airlock api log:\n%s", b)
		}
	})
	waitHTTP(t, "http://"+tr.internal+"/healthz")

	out, err := exec.Command(e.bin, "template", "publish", templateName, "--state-dir", e.stateDir, "--blobs", tr.blobURL, "--dsn", dsn).CombinedOutput()
	if err != nil {
		t.Fatalf("template publish: %v: %s", err, out)
	}
	t.Logf("publish: %s", strings.TrimSpace(string(out)))
	out, err = exec.Command(e.bin, "cluster", "key", "create", tenantA, "--dsn", dsn).Output()
	if err != nil {
		t.Fatalf("cluster key create: %v", err)
	}
	if tr.cl, err = client.New("http://"+public, strings.TrimSpace(string(out))); err != nil {
		t.Fatal(err)
	}
	return tr
}

// startNode starts `airlock serve --cluster-api` as node id on a state
// directory that starts empty, pulling from the tier's blob store.
func (tr *tier) startNode(t *testing.T, e *env, id string, extra ...string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "alk-e2e-state-")
	if err != nil {
		t.Fatal(err)
	}
	removeAtExit(dir)
	node := &env{root: e.root, bin: e.bin, stateDir: dir}
	startDaemon(t, node, append([]string{"--cluster-api", "http://" + tr.internal, "--cluster-token-file", tr.tokenFile,
		"--node-id", id, "--node-listen", multiproc.FreeAddr(t), "--cluster-blobs", tr.blobURL}, extra...)...)
	return dir
}

// create makes a sandbox through the tier, waiting while no node holds
// the build ready yet (failed_precondition).
func (tr *tier) create(t *testing.T) *client.Sandbox {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		sbx, err := tr.cl.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 600})
		switch {
		case err == nil:
			return sbx
		case errors.Is(err, client.ErrFailedPrecondition) && time.Now().Before(deadline):
			time.Sleep(200 * time.Millisecond)
		default:
			t.Fatalf("create through the tier: %v", err)
		}
	}
}

// TestClusterPulledTemplate: the template the env baked ("node A", the
// env's state directory) is published with `airlock template publish` to
// a file:// blob store; an `airlock api` and one `airlock serve
// --cluster-api` node whose state directory starts empty ("node B") run
// as processes; node B pulls the build, and a create through the tier
// restores a real VM from the pulled files on it.
func TestClusterPulledTemplate(t *testing.T) {
	e := getEnv(t)
	tr := startTier(t, e)
	began := time.Now()
	dirB := tr.startNode(t, e, "node-b")
	sbx := tr.create(t)
	t.Logf("node B started, pulled and restored a clone in %s", time.Since(began).Round(time.Millisecond))
	if sbx.Node != "node-b" {
		t.Fatalf("placed on %q", sbx.Node)
	}
	if got := mustExec(t, sbx, "cat /etc/airlock/baked-marker"); strings.TrimSpace(got) != "written during the bake" {
		t.Fatalf("the clone reads %q", got)
	}
	regA, _ := template.NewRegistry(filepath.Join(e.stateDir, "templates"))
	regB, _ := template.NewRegistry(filepath.Join(dirB, "templates"))
	a, errA := regA.Get(templateName)
	b, errB := regB.Get(templateName)
	if errA != nil || errB != nil || a.Key != b.Key || !strings.HasPrefix(b.RootImage, dirB) {
		t.Fatalf("node B holds %+v (%v); node A %+v (%v)", b, errB, a, errA)
	}
	if err := sbx.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestClusterTwoNetworkedNodes is the harness's real-VM variant: one
// `airlock api` in front of two `airlock serve --net --cluster-api` nodes
// (own state and run directories, network instances, ranges and proxy
// addresses), both pulling the published build. Creates through the tier
// land on both; each VM answers an exec with its network interface up
// behind default-deny; a get through the tier names the node; kills
// through the tier leave nothing behind on either node (the harness checks
// each daemon's leftovers as it stops).
func TestClusterTwoNetworkedNodes(t *testing.T) {
	e := getEnv(t)
	tr := startTier(t, e)
	for i, id := range []string{"node-1", "node-2"} {
		tr.startNode(t, e, id, "--net", "--net-instance", netpooltest.Instance()+fmt.Sprint(i),
			"--net-base-cidr", netpooltest.FreeBase(t, 24), "--proxy-addr", netpooltest.FreeAddr(t))
	}
	perNode := map[string][]*client.Sandbox{}
	for n := 0; len(perNode) < 2; n++ {
		if n == 12 {
			t.Fatalf("12 creates all landed on %v", perNode)
		}
		sbx := tr.create(t)
		perNode[sbx.Node] = append(perNode[sbx.Node], sbx)
	}
	for node, sbxs := range perNode {
		for _, sbx := range sbxs {
			if out := mustExec(t, sbx, "cat /sys/class/net/eth0/operstate"); strings.TrimSpace(out) != "up" {
				t.Errorf("%s on %s: eth0 is %q", sbx.ID, node, out)
			}
			got, err := tr.cl.GetSandbox(ctx(t), sbx.ID)
			if err != nil || got.Node != node || got.Egress.Default != "deny" {
				t.Errorf("get %s through the tier: %+v, %v; want node %s, default deny", sbx.ID, got, err, node)
			}
			if err := sbx.Kill(context.Background()); err != nil {
				t.Errorf("kill %s on %s: %v", sbx.ID, node, err)
			}
		}
		t.Logf("%s took %d sandbox(es)", node, len(sbxs))
	}
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
