package template

import (
	"gopkg.in/yaml.v3"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Defaults and limits of a spec's scalar fields.
const (
	DefaultSuite        = "bookworm"
	DefaultMemoryMiB    = 256
	DefaultVCPUs        = 1
	DefaultTTLSeconds   = 300
	DefaultFileMode     = fs.FileMode(0o644)
	minMemoryMiB        = 128
	maxMemoryMiB        = 8192
	maxVCPUs            = 8
	maxTTLSeconds       = 86400
	minRootfsSizeMiB    = 64
	maxRootfsSizeMiB    = 65536
	hashSchemeVersion   = 1
	maxSpecBytes        = 1 << 20
	specFileExt         = ".yaml"
	templateInfoPath    = "/etc/airlock/template.json"
	inlineSourceName    = "spec"
	maxInheritanceDepth = 16
)

// Suites lists the Debian suites a template may be built from. The host's
// apt sources must carry the suite: mmdebstrap and the package pre-flight
// both use them.
var Suites = []string{"bookworm"}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	packageRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	envKeyRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	modeRE    = regexp.MustCompile(`^0?[0-7]{3,4}$`)
	yamlLine  = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlField = regexp.MustCompile(`^field (\S+) not found in type`)
)

// Spec is one template, as written in its spec file or, after Resolve,
// flattened with everything it inherits. Scalar fields hold their
// defaults when the file does not set them.
type Spec struct {
	Name       string     // [a-z0-9][a-z0-9-]{0,62}; unique per template directory
	From       string     // parent template, "" for none; informational once resolved
	Suite      string     // Debian suite, one of Suites; "" when Image is set
	Image      ImageRef   // container image the root comes from instead of Debian packages; zero for none
	Packages   []string   // Debian packages on top of minbase (and the defaults every template gets)
	Files      []File     // copied into the root, in order; a later entry with the same Dst wins
	Build      []string   // shell commands run in the VM during the bake, in order
	Warmup     string     // one shell command run after Build, before the snapshot
	WarmupExec [][]string // or: commands run after Build without a shell (argv each); exclusive with Warmup
	// Keep makes a minimal root: only these paths (programs with the
	// libraries they load, data files and directories) and airlock's own
	// needs stay; no shell, package manager or interpreter unless listed.
	Keep              []string
	Env               map[string]string // environment of every exec in this template (over the image's)
	Workdir           string            // working directory of execs that name none; "" = the image's, else /
	MemoryMiB         int               // guest RAM
	VCPUs             int               // guest CPUs
	KernelArgs        []string          // extra kernel command line words
	DefaultTTLSeconds int               // sandbox lifetime when a create does not say
	RootfsSizeMiB     int               // 0 = computed from the content plus headroom

	// Path is the spec file ("" when parsed from bytes); it prefixes errors.
	Path string
	// Dir is the directory Files' Src paths are relative to ("" for a
	// shipped spec, which can copy only airlock's own tools).
	Dir string

	set        map[string]bool // scalar fields the file itself set; drives inheritance
	pkgOrigins []origin        // where each of Packages was declared (parallel to Packages)
	lines      map[string]int  // field path ("packages[2]") -> line in the file
	resolved   bool            // true once `from` is flattened (or there is none)
	shipped    bool            // read from the specs built into airlock (package templates)
}

// File is one host file copied into the template's root filesystem.
type File struct {
	Src  string      // as written: relative to the spec file's directory
	Dst  string      // absolute, clean guest path
	Mode fs.FileMode // permission bits (0644 by default)

	dir    string // the directory Src is confined to (the declaring spec's Dir)
	tool   string // for Src "airlock:<name>": the resolved path of airlock's own binary
	origin origin // where the entry was declared, for errors found later
}

// ToolScheme prefixes a files[].src that names one of airlock's own
// binaries instead of a file beside the spec ("airlock:airlock-docs"): the
// binary built with the airlock that runs the build, so a template always
// carries the tool that matches the host's job runner, and a changed tool
// changes the image hash (its content is hashed like any file).
const ToolScheme = "airlock:"

// tools are the binaries ToolScheme may name, with the environment
// variable that overrides where each is found.
var tools = map[string]string{"airlock-docs": "AIRLOCK_DOCS"}

// origin is where a list item was declared, so that an error found after
// Resolve (an unknown package in a parent) still names the right file.
type origin struct {
	source string // spec file
	field  string // "packages[2]"
	line   int    // 0 = unknown
}

func (o origin) errf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if o.line > 0 {
		return errdefs.InvalidArgument("%s:%d: %s: %s", o.source, o.line, o.field, msg)
	}
	return errdefs.InvalidArgument("%s: %s: %s", o.source, o.field, msg)
}

func (s *Spec) origin(field string) origin {
	return origin{source: s.source(), field: field, line: s.lines[field]}
}

// rawSpec mirrors the file format; pointers tell "absent" from "zero".
type rawSpec struct {
	Name              *string           `yaml:"name"`
	From              *string           `yaml:"from"`
	Suite             *string           `yaml:"suite"`
	Image             *string           `yaml:"image"`
	Packages          []string          `yaml:"packages"`
	Files             []rawFile         `yaml:"files"`
	Build             []string          `yaml:"build"`
	Warmup            *warmupField      `yaml:"warmup"`
	Keep              []string          `yaml:"keep"`
	Env               map[string]string `yaml:"env"`
	Workdir           *string           `yaml:"workdir"`
	MemoryMiB         *int              `yaml:"memory_mib"`
	VCPUs             *int              `yaml:"vcpus"`
	KernelArgs        []string          `yaml:"kernel_args"`
	DefaultTTLSeconds *int              `yaml:"default_ttl_seconds"`
	RootfsSizeMiB     *int              `yaml:"rootfs_size_mib"`
}

// warmupField is warmup as written: one shell command (a string), or a
// list of commands each given as its argv (run without a shell).
type warmupField struct {
	shell *string
	argv  [][]string
	line  int
}

func (w *warmupField) UnmarshalYAML(n *yaml.Node) error {
	w.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		w.shell = &s
		return nil
	case yaml.SequenceNode:
		if err := n.Decode(&w.argv); err != nil {
			return fmt.Errorf("line %d: warmup: a list of commands, each a list of words (argv): %w", n.Line, err)
		}
		return nil
	}
	return fmt.Errorf("line %d: warmup: a shell command or a list of argv lists", n.Line)
}

type rawFile struct {
	Src  string `yaml:"src"`
	Dst  string `yaml:"dst"`
	Mode string `yaml:"mode"`
}

// Load reads and validates the spec file at path. Files' Src paths are
// relative to path's directory. The result is not resolved: call Resolve
// (or use LoadResolved) when it has a `from`.
func Load(path string) (*Spec, error) {
	data, err := readLimited(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errdefs.NotFound("template spec %s does not exist", path)
		}
		return nil, fmt.Errorf("read template spec: %w", err)
	}
	return parse(data, filepath.Dir(path), path)
}

// Parse validates spec bytes whose Files are relative to dir.
func Parse(data []byte, dir string) (*Spec, error) {
	return parse(data, dir, "")
}

// DirLookup returns a lookup for Resolve that loads <dir>/<name>.yaml and
// checks that the file names the template it is looked up by.
func DirLookup(dir string) func(name string) (*Spec, error) {
	return func(name string) (*Spec, error) {
		if !nameRE.MatchString(name) {
			return nil, errdefs.InvalidArgument("%q is not a valid template name", name)
		}
		s, err := Load(filepath.Join(dir, name+specFileExt))
		if err != nil {
			return nil, err
		}
		if s.Name != name {
			return nil, errdefs.InvalidArgument("%s: name: %q does not match the file name (want %q)", s.source(), s.Name, name)
		}
		return s, nil
	}
}

// LoadResolved loads template name from dir and flattens its `from` chain
// with the other specs in dir.
func LoadResolved(dir, name string) (*Spec, error) {
	lookup := DirLookup(dir)
	s, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return s.Resolve(lookup)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSpecBytes {
		return nil, errdefs.InvalidArgument("%s: larger than %d bytes", path, maxSpecBytes)
	}
	return data, nil
}

// builtinPrefix marks the Path of a spec built into airlock.
const builtinPrefix = "builtin:"

// Source is where the spec was read from: the spec file's absolute path,
// "builtin:NAME.yaml" for one shipped inside airlock, or "" for bytes.
func (s *Spec) Source() string {
	if s.Path == "" || s.shipped {
		return s.Path
	}
	if abs, err := filepath.Abs(s.Path); err == nil {
		return abs
	}
	return s.Path
}
