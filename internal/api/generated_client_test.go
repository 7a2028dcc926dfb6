package api_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
)

// The generated code's runtime; scripts/setup.sh --test builds the
// generator (oapi-codegen) into the cache's bin directory and fills the
// module cache with this module's graph (by tidying a module that
// requires it), so the test's own tidy runs offline.
const oapiRuntime = "github.com/oapi-codegen/runtime v1.1.2"

// oapiCodegen is the generator setup.sh built.
func oapiCodegen(t *testing.T) string {
	cache := os.Getenv("AIRLOCK_CACHE_DIR")
	if cache == "" {
		cache = "/var/cache/airlock"
	}
	p := filepath.Join(cache, "bin", "oapi-codegen")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (scripts/setup.sh --test builds it)", p, err)
	}
	return p
}

// TestGeneratedClient generates a Go client from openapi.json as a user
// would (oapi-codegen), builds it in a module of its own, and runs it
// against the real API: the metadata filters it sends (deepObject,
// metadata[KEY]=VALUE) select what the server says they select.
func TestGeneratedClient(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds a client")
	}
	h := newHarness(t, api.Config{})
	h.create(h.keyA, map[string]string{"matter": "m-1"})
	h.create(h.keyA, map[string]string{"matter": "m-2"})
	h.create(h.keyA, map[string]string{"matter": "m-1", "class": "privileged"})

	dir := t.TempDir()
	spec, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.json", string(spec))
	write("gen.yaml", "package: gen\noutput: gen/client.gen.go\ngenerate:\n  models: true\n  client: true\n")
	write("go.mod", "module example.com/generated\n\ngo 1.26\n\nrequire "+oapiRuntime+"\n")
	write("main.go", `package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"

	"example.com/generated/gen"
)

func main() {
	c, err := gen.NewClientWithResponses(os.Getenv("URL"), gen.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+os.Getenv("KEY"))
		return nil
	}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	out := map[string]any{}
	for name, md := range map[string]map[string]string{"m1": {"matter": "m-1"}, "m1priv": {"matter": "m-1", "class": "privileged"}, "none": {"matter": "m-9"}} {
		res, err := c.ListSandboxesWithResponse(ctx, &gen.ListSandboxesParams{Metadata: &md})
		if err != nil {
			panic(err)
		}
		if res.JSON200 == nil {
			out[name] = string(res.Body)
			continue
		}
		out[name] = len(*res.JSON200.Sandboxes)
	}
	ev := []string{"create"}
	md := map[string]string{"matter": "m-2"}
	res, err := c.AuditWithResponse(ctx, &gen.AuditParams{Metadata: &md, Event: &ev})
	if err != nil {
		panic(err)
	}
	if res.JSON200 != nil {
		out["audit_m2"] = len(*res.JSON200.Records)
	} else {
		out["audit_m2"] = string(res.Body)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
`)
	gen := exec.Command(oapiCodegen(t), "-config", "gen.yaml", "openapi.json")
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, out)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOWORK=off"}, env...)...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}
	run(nil, "mod", "tidy")
	out := run([]string{"URL=" + h.env.TCPURL, "KEY=" + h.keyA}, "run", ".")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	for k, want := range map[string]float64{"m1": 2, "m1priv": 1, "none": 0, "audit_m2": 1} {
		if got[k] != want {
			t.Errorf("%s: %v, want %v (all: %v)", k, got[k], want, got)
		}
	}
}
