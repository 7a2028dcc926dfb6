package e2e

import (
	"context"
	"errors"
	"net"
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
	"github.com/airlock-dev/airlock/internal/template"
)

func freeTCP(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestClusterPulledTemplate: the template the env baked ("node A", the
// env's state directory) is published with `airlock template publish` to
// a file:// blob store; an `airlock api` and one `airlock serve
// --cluster-api` node whose state directory starts empty ("node B") run
// as processes; node B pulls the build, and a create through the tier
// restores a real VM from the pulled files on it.
func TestClusterPulledTemplate(t *testing.T) {
	e := getEnv(t)
	dsn := clustertest.Private(t).Database(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "join-token")
	if err := os.WriteFile(tokenFile, []byte(uniq("join-token-")+"-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	blobURL := "file://" + filepath.Join(dir, "blobs")
	public, internal := freeTCP(t), freeTCP(t)
	apiLog, err := os.Create(filepath.Join(dir, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer apiLog.Close()
	api := exec.Command(e.bin, "api", "--dsn", dsn, "--listen", public, "--internal-listen", internal,
		"--cluster-token-file", tokenFile, "--heartbeat", "500ms", "--lease-ttl", "5s", "--lease-grace", "2s",
		"--sweep-interval", "500ms", "--fence-after", "0", "--create-timeout", "3m")
	api.Stdout, api.Stderr = apiLog, apiLog
	api.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = api.Process.Signal(syscall.SIGTERM)
		_ = api.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(apiLog.Name())
			t.Logf("airlock api log:\n%s", b)
		}
	}()
	waitHTTP(t, "http://"+internal+"/healthz")

	out, err := exec.Command(e.bin, "template", "publish", templateName, "--state-dir", e.stateDir, "--blobs", blobURL, "--dsn", dsn).CombinedOutput()
	if err != nil {
		t.Fatalf("template publish: %v: %s", err, out)
	}
	t.Logf("publish: %s", strings.TrimSpace(string(out)))
	out, err = exec.Command(e.bin, "cluster", "key", "create", tenantA, "--dsn", dsn).Output()
	if err != nil {
		t.Fatalf("cluster key create: %v", err)
	}
	cl, err := client.New("http://"+public, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}

	dirB, err := os.MkdirTemp("", "alk-e2e-state-")
	if err != nil {
		t.Fatal(err)
	}
	removeAtExit(dirB)
	nodeB := &env{root: e.root, bin: e.bin, stateDir: dirB}
	began := time.Now()
	startDaemon(t, nodeB, "--cluster-api", "http://"+internal, "--cluster-token-file", tokenFile,
		"--node-id", "node-b", "--node-listen", freeTCP(t), "--cluster-blobs", blobURL)

	// Creates fail failed_precondition until node B holds the build ready.
	var sbx *client.Sandbox
	deadline := time.Now().Add(10 * time.Minute)
	for sbx == nil {
		sbx, err = cl.CreateSandbox(ctx(t), client.CreateOptions{Template: templateName, TTLSeconds: 600})
		switch {
		case err == nil:
		case errors.Is(err, client.ErrFailedPrecondition) && time.Now().Before(deadline):
			time.Sleep(200 * time.Millisecond)
		default:
			t.Fatalf("create through the tier: %v", err)
		}
	}
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
