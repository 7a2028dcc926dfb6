package hostimports

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/airlock-dev/airlock"

// contracts are the internal/docs packages host code may link.
var contracts = []string{
	"internal/docs",
	"internal/docs/imagewrite",
	"internal/docs/invoice/result",
	"internal/docs/redact/policy",
	"internal/docs/redact/result",
	"internal/docs/review/playbook",
	"internal/docs/review/report",
	"internal/docs/review/result",
	"internal/docs/verify/result",
}

// contractThirdParty are the modules a contract package may import
// besides the standard library and other contracts.
var contractThirdParty = []string{"gopkg.in/yaml.v3"}

// guestSide are the trees that run inside a sandbox (or only evaluate).
var guestSide = []string{
	"internal/docs",
	"internal/docseval",
	"internal/guest/agent",
	"cmd/airlock-docs",
	"cmd/airlock-agent",
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// listPackages runs `go list -deps -json` over patterns from the module root.
func listPackages(t *testing.T, patterns ...string) map[string]*pkg {
	t.Helper()
	// go test puts its own toolchain first on PATH.
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports,Deps,Standard"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", patterns, err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := &pkg{}
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// rel is an import path relative to the module, or "" outside it.
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return ""
}

func under(path string, trees []string) bool {
	for _, t := range trees {
		if path == t || strings.HasPrefix(path, t+"/") {
			return true
		}
	}
	return false
}

// isHost reports whether a module package is host code.
func isHost(p *pkg) bool {
	r := rel(p.ImportPath)
	return r != "" && !under(r, guestSide) && !strings.Contains(r, "/testdata/")
}

// violations lists, for every host package among pkgs, the document code
// it links, and every contract package's imports beyond what it may use.
func violations(pkgs map[string]*pkg, hosts []*pkg) []string {
	var out []string
	for _, h := range hosts {
		for _, d := range h.Deps {
			r := rel(d)
			if r == "" || !under(r, guestSide) {
				continue
			}
			if under(r, []string{"internal/docseval"}) || slices.Contains(contracts, r) {
				continue // the deps of these are in h.Deps too, and checked there
			}
			out = append(out, h.ImportPath+" links "+d)
		}
	}
	for _, c := range contracts {
		p := pkgs[module+"/"+c]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if q := pkgs[imp]; q != nil && q.Standard || slices.Contains(contracts, rel(imp)) || slices.Contains(contractThirdParty, imp) {
				continue
			}
			out = append(out, "contract "+p.ImportPath+" imports "+imp)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func hostPackages(pkgs map[string]*pkg) []*pkg {
	var hosts []*pkg
	for _, p := range pkgs {
		if isHost(p) {
			hosts = append(hosts, p)
		}
	}
	return hosts
}

// TestHostLinksNoDocumentCode is the rule over the whole module.
func TestHostLinksNoDocumentCode(t *testing.T) {
	pkgs := listPackages(t, "./...")
	hosts := hostPackages(pkgs)
	var names []string
	for _, h := range hosts {
		names = append(names, rel(h.ImportPath))
	}
	for _, must := range []string{"cmd/airlock", "cmd/airlock-jailer", "internal/api", "internal/sandbox", "internal/jobs"} {
		if !slices.Contains(names, must) {
			t.Fatalf("%s not seen as host code; host packages: %v", must, names)
		}
	}
	for _, v := range violations(pkgs, hosts) {
		t.Error(v)
	}
}

// TestGuestToolCarriesNoGenerators: the static tool baked into the
// document templates links no evaluation code and no test fonts.
func TestGuestToolCarriesNoGenerators(t *testing.T) {
	pkgs := listPackages(t, "./cmd/airlock-docs")
	for path := range pkgs {
		if under(rel(path), []string{"internal/docseval"}) || strings.Contains(path, "/font/gofont") {
			t.Errorf("cmd/airlock-docs links %s", path)
		}
	}
}

// TestRuleCatchesAHostImportingTheAnalyser proves the rule can fail: a
// host-shaped program importing internal/docs/review is reported.
func TestRuleCatchesAHostImportingTheAnalyser(t *testing.T) {
	pkgs := listPackages(t, "./internal/hostimports/testdata/badhost")
	bad := pkgs[module+"/internal/hostimports/testdata/badhost"]
	if bad == nil {
		t.Fatal("badhost not listed")
	}
	got := violations(pkgs, []*pkg{bad})
	want := bad.ImportPath + " links " + module + "/internal/docs/review"
	if !slices.Contains(got, want) {
		t.Fatalf("violations %v do not include %q", got, want)
	}
	if slices.Contains(got, bad.ImportPath+" links "+module+"/internal/docs/review/result") {
		t.Fatalf("a contract package was reported: %v", got)
	}
}
