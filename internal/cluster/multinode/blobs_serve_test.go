package multinode

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// TestBlobsServeCommand runs `airlock blobs serve` as a process: PUT
// needs the token, a present blob is not sent again, GET returns it.
func TestBlobsServeCommand(t *testing.T) {
	airlock, _ := multiproc.Binaries(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("serve-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(airlock, "blobs", "serve", "--dir", filepath.Join(dir, "store"), "--listen", "127.0.0.1:0", "--token-file", tokenFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatal("blobs serve printed nothing")
	}
	addr, ok := strings.CutPrefix(sc.Text(), "listening on ")
	if !ok {
		t.Fatalf("blobs serve printed %q", sc.Text())
	}
	file := filepath.Join(dir, "blob")
	randomFile(t, file, 3<<20)
	ctx := context.Background()
	anon, _ := blobs.Open("http://"+addr, "")
	if _, _, err := blobs.Upload(ctx, anon, file); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("upload without the token: %v, want permission_denied", err)
	}
	s, _ := blobs.Open("http://"+addr, "serve-token")
	d, sent, err := blobs.Upload(ctx, s, file)
	if err != nil || sent != 3<<20 {
		t.Fatalf("upload: %d bytes, %v", sent, err)
	}
	if _, sent, err := blobs.Upload(ctx, s, file); err != nil || sent != 0 {
		t.Fatalf("second upload: %d bytes, %v", sent, err)
	}
	rc, n, err := anon.Get(ctx, d)
	if err != nil || n != 3<<20 {
		t.Fatalf("get: %d %v", n, err)
	}
	rc.Close()
	if _, err := os.Stat(filepath.Join(dir, "store", blobs.Key(d))); err != nil {
		t.Fatalf("the blob is not in --dir: %v", err)
	}
}
