package pgstore

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyClusterCodeReachesPostgres keeps PostgreSQL out of the
// single-host daemon and out of cluster nodes: outside the cluster's
// API-tier packages and the operator's import (hostimport), only the
// `airlock cluster`, `airlock node` and `airlock api` commands import
// this package or the driver, so `airlock serve` (alone
// or as a node) has no path that opens a connection. The node side
// (nodeagent, nodewire) never does: nodes hold no database credentials.
// Test helpers that start a server are imported by tests only.
func TestOnlyClusterCodeReachesPostgres(t *testing.T) {
	root, err := filepath.Abs("../../..")
	must(t, err)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s: %v", root, err)
	}
	const mod = "github.com/airlock-dev/airlock/"
	allowed := func(rel string, imp string) bool {
		switch {
		case strings.HasPrefix(rel, "internal/cluster/pgstore/"), strings.HasPrefix(rel, "internal/cluster/clustertest/"):
			return true
		case imp == mod+"internal/cluster/clustertest", imp == mod+"internal/cluster/storetest":
			return strings.HasSuffix(rel, "_test.go")
		case strings.HasPrefix(rel, "internal/cluster/nodeagent/"), strings.HasPrefix(rel, "internal/cluster/nodewire/"),
			strings.HasPrefix(rel, "internal/cluster/templatesync/"), strings.HasPrefix(rel, "internal/cluster/blobs/"):
			return false
		case strings.HasPrefix(rel, "internal/cluster/apitier/"), strings.HasPrefix(rel, "internal/cluster/multinode/"),
			strings.HasPrefix(rel, "internal/cluster/hostimport/"),
			strings.HasPrefix(rel, "internal/cluster/templatepub/"):
			return true
		}
		return rel == "cmd/airlock/cluster_cmd.go" || rel == "cmd/airlock/cluster_cmd_test.go" || rel == "cmd/airlock/api_cmd.go" ||
			rel == "cmd/airlock/node_cmd.go" || rel == "cmd/airlock/publish_cmd.go"
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			pg := strings.HasPrefix(imp, "github.com/jackc/") || imp == mod+"internal/cluster/pgstore" ||
				imp == mod+"internal/cluster/clustertest" || imp == mod+"internal/cluster/storetest"
			if pg && !allowed(filepath.ToSlash(rel), imp) {
				t.Errorf("%s imports %s: PostgreSQL is for the cluster's code only", rel, imp)
			}
		}
		checked++
		return nil
	})
	must(t, err)
	if checked < 100 {
		t.Fatalf("checked only %d files: wrong root?", checked)
	}
}
