package invoicecheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyResultTypes keeps the host from linking guest extraction
// code: of the docs tree it may import only the result envelope (the docs
// package itself) and the invoice schema, and those only the standard
// library.
func TestImportsOnlyResultTypes(t *testing.T) {
	check := func(dir string, allowed func(string) bool) {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !allowed(p) {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
	const docs = "github.com/airlock-dev/airlock/internal/docs"
	check(".", func(p string) bool {
		return !strings.HasPrefix(p, docs) || p == docs || p == docs+"/invoice/result"
	})
	check("../../docs/invoice/result", func(p string) bool { return !strings.Contains(p, ".") })
	check("../../docs", func(p string) bool { return !strings.Contains(p, ".") })
}
