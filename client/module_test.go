package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsableFromAnotherModule follows the README: a module of its own
// requires this one through a replace directive, imports the client and
// builds. It runs offline (GOPROXY=off), from the module cache that
// scripts/setup.sh --test filled (go mod download: tidy loads the tests
// of this module's packages too, so the build alone is not enough), with
// the repository's go.sum.
func TestUsableFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/user\n\ngo 1.26\n")
	// The repository's checksums: with them no checksum database is asked.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sums))
	write("main.go", `package main

import (
	"context"
	"fmt"

	"github.com/airlock-dev/airlock/client"
)

func main() {
	c, err := client.FromEnv()
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Health(context.Background()) != nil)
}
`)
	run := func(args ...string) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "edit", "-require", "github.com/airlock-dev/airlock@v0.0.0", "-replace", "github.com/airlock-dev/airlock="+root)
	run("mod", "tidy")
	run("build", "-o", filepath.Join(dir, "user"), ".")
}
