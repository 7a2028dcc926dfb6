package template

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/image"
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
	Name              string            // [a-z0-9][a-z0-9-]{0,62}; unique per template directory
	From              string            // parent template, "" for none; informational once resolved
	Suite             string            // Debian suite, one of Suites
	Packages          []string          // Debian packages on top of minbase (and the defaults every template gets)
	Files             []File            // copied into the root, in order; a later entry with the same Dst wins
	Build             []string          // shell commands run in the VM during the bake, in order
	Warmup            string            // one shell command run after Build, before the snapshot
	Env               map[string]string // environment of every exec in this template
	MemoryMiB         int               // guest RAM
	VCPUs             int               // guest CPUs
	KernelArgs        []string          // extra kernel command line words
	DefaultTTLSeconds int               // sandbox lifetime when a create does not say
	RootfsSizeMiB     int               // 0 = computed from the content plus headroom

	// Path is the spec file ("" when parsed from bytes); it prefixes errors.
	Path string
	// Dir is the directory Files' Src paths are relative to.
	Dir string

	set        map[string]bool // scalar fields the file itself set; drives inheritance
	pkgOrigins []origin        // where each of Packages was declared (parallel to Packages)
	lines      map[string]int  // field path ("packages[2]") -> line in the file
	resolved   bool            // true once `from` is flattened (or there is none)
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
	Packages          []string          `yaml:"packages"`
	Files             []rawFile         `yaml:"files"`
	Build             []string          `yaml:"build"`
	Warmup            *string           `yaml:"warmup"`
	Env               map[string]string `yaml:"env"`
	MemoryMiB         *int              `yaml:"memory_mib"`
	VCPUs             *int              `yaml:"vcpus"`
	KernelArgs        []string          `yaml:"kernel_args"`
	DefaultTTLSeconds *int              `yaml:"default_ttl_seconds"`
	RootfsSizeMiB     *int              `yaml:"rootfs_size_mib"`
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

func parse(data []byte, dir, file string) (*Spec, error) {
	if dir == "" {
		dir = "."
	}
	s := &Spec{Path: file, Dir: dir, set: map[string]bool{}, lines: map[string]int{}}
	if len(data) > maxSpecBytes {
		return nil, s.errf("", "larger than %d bytes", maxSpecBytes)
	}

	// Pass 1: the node tree, for line numbers and for a clean "empty" error.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, s.yamlErr(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, s.errf("", "empty spec (name is required)")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errdefs.InvalidArgument("%s:%d: a spec is a mapping of fields, not a %s", s.source(), root.Line, kindName(root))
	}
	indexLines(root, "", s.lines)

	// Pass 2: strict decode. KnownFields makes a misspelt field an error
	// instead of a silently ignored setting.
	var raw rawSpec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, s.yamlErr(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errdefs.InvalidArgument("%s:%d: only one YAML document is allowed per spec", s.source(), extra.Line)
	}
	if err := s.fill(&raw); err != nil {
		return nil, err
	}
	if s.From == "" {
		s.resolved = true
	}
	return s, nil
}

// fill validates raw field by field and copies it into s, applying
// defaults.
func (s *Spec) fill(raw *rawSpec) error {
	if raw.Name == nil {
		return s.errf("name", "is required")
	}
	s.Name = *raw.Name
	if !nameRE.MatchString(s.Name) {
		return s.errf("name", "%q is not a valid template name (lower-case letters, digits and '-', at most 63, not starting with '-')", s.Name)
	}
	if raw.From != nil {
		s.From = *raw.From
		if !nameRE.MatchString(s.From) {
			return s.errf("from", "%q is not a valid template name", s.From)
		}
		if s.From == s.Name {
			return s.errf("from", "template %q cannot inherit from itself", s.Name)
		}
	}

	s.Suite = DefaultSuite
	if raw.Suite != nil {
		s.set["suite"] = true
		s.Suite = *raw.Suite
		if !contains(Suites, s.Suite) {
			return s.errf("suite", "%q is not a supported Debian suite (supported: %s)", s.Suite, strings.Join(Suites, ", "))
		}
	}

	seenPkg := map[string]bool{}
	for i, p := range raw.Packages {
		field := fmt.Sprintf("packages[%d]", i)
		if !packageRE.MatchString(p) {
			return s.errf(field, "%q is not a valid Debian package name", p)
		}
		if seenPkg[p] {
			return s.errf(field, "%q is listed twice", p)
		}
		seenPkg[p] = true
		s.Packages = append(s.Packages, p)
		s.pkgOrigins = append(s.pkgOrigins, s.origin(field))
	}

	seenDst := map[string]int{}
	for i, rf := range raw.Files {
		f, err := s.checkFile(i, rf)
		if err != nil {
			return err
		}
		if j, dup := seenDst[f.Dst]; dup {
			return s.errf(fmt.Sprintf("files[%d].dst", i), "%q is already the dst of files[%d]", f.Dst, j)
		}
		seenDst[f.Dst] = i
		s.Files = append(s.Files, f)
	}

	for i, c := range raw.Build {
		if strings.TrimSpace(c) == "" {
			return s.errf(fmt.Sprintf("build[%d]", i), "is empty")
		}
		if strings.ContainsRune(c, 0) {
			return s.errf(fmt.Sprintf("build[%d]", i), "contains a NUL byte")
		}
		s.Build = append(s.Build, c)
	}
	if raw.Warmup != nil {
		s.set["warmup"] = true
		s.Warmup = *raw.Warmup
		if strings.ContainsRune(s.Warmup, 0) {
			return s.errf("warmup", "contains a NUL byte")
		}
	}

	if len(raw.Env) > 0 {
		s.Env = map[string]string{}
	}
	for _, k := range sortedKeys(raw.Env) {
		v := raw.Env[k]
		if !envKeyRE.MatchString(k) {
			return s.errf("env."+k, "%q is not a valid environment variable name", k)
		}
		if strings.ContainsRune(v, 0) {
			return s.errf("env."+k, "value contains a NUL byte")
		}
		s.Env[k] = v
	}

	ints := []struct {
		field    string
		val      *int
		dst      *int
		def      int
		min, max int
	}{
		{"memory_mib", raw.MemoryMiB, &s.MemoryMiB, DefaultMemoryMiB, minMemoryMiB, maxMemoryMiB},
		{"vcpus", raw.VCPUs, &s.VCPUs, DefaultVCPUs, 1, maxVCPUs},
		{"default_ttl_seconds", raw.DefaultTTLSeconds, &s.DefaultTTLSeconds, DefaultTTLSeconds, 1, maxTTLSeconds},
		{"rootfs_size_mib", raw.RootfsSizeMiB, &s.RootfsSizeMiB, 0, minRootfsSizeMiB, maxRootfsSizeMiB},
	}
	for _, n := range ints {
		*n.dst = n.def
		if n.val == nil {
			continue
		}
		s.set[n.field] = true
		if *n.val < n.min || *n.val > n.max {
			return s.errf(n.field, "%d is out of range (%d..%d)", *n.val, n.min, n.max)
		}
		*n.dst = *n.val
	}

	for i, a := range raw.KernelArgs {
		if a == "" || strings.ContainsAny(a, " \t\r\n\x00") {
			return s.errf(fmt.Sprintf("kernel_args[%d]", i), "%q must be one non-empty word without whitespace", a)
		}
		s.KernelArgs = append(s.KernelArgs, a)
	}
	return nil
}

// checkFile validates one files[] entry. Src must stay inside the spec's
// directory even after following symlinks: a spec must not be able to
// copy, say, the host's /etc/shadow into an image.
func (s *Spec) checkFile(i int, rf rawFile) (File, error) {
	field := fmt.Sprintf("files[%d]", i)
	f := File{Src: rf.Src, Dst: rf.Dst, Mode: DefaultFileMode, dir: s.Dir, origin: s.origin(field)}

	if rf.Src == "" {
		return f, s.errf(field+".src", "is required")
	}
	if name, ok := strings.CutPrefix(rf.Src, ToolScheme); ok {
		env, known := tools[name]
		if !known {
			return f, s.errf(field+".src", "%q: airlock has no tool %q (known: airlock-docs)", rf.Src, name)
		}
		p, err := image.FindBinary(name, env)
		if err != nil {
			return f, s.errf(field+".src", "%v", err)
		}
		f.tool = p
		return s.checkDst(f, field, rf)
	}
	if filepath.IsAbs(rf.Src) {
		return f, s.errf(field+".src", "%q must be relative to the spec's directory", rf.Src)
	}
	clean := filepath.Clean(rf.Src)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return f, s.errf(field+".src", "%q escapes the spec's directory", rf.Src)
	}
	base, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return f, s.errf(field+".src", "spec directory %s: %v", s.Dir, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(s.Dir, clean))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return f, s.errf(field+".src", "%q does not exist (relative to %s)", rf.Src, s.Dir)
		}
		return f, s.errf(field+".src", "%q: %v", rf.Src, err)
	}
	if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return f, s.errf(field+".src", "%q escapes the spec's directory through a symlink (to %s)", rf.Src, real)
	}
	st, err := os.Stat(real)
	if err != nil {
		return f, s.errf(field+".src", "%q: %v", rf.Src, err)
	}
	if !st.Mode().IsRegular() {
		return f, s.errf(field+".src", "%q is not a regular file", rf.Src)
	}
	return s.checkDst(f, field, rf)
}

// checkDst validates a files[] entry's dst and mode.
func (s *Spec) checkDst(f File, field string, rf rawFile) (File, error) {
	switch {
	case rf.Dst == "":
		return f, s.errf(field+".dst", "is required")
	case !path.IsAbs(rf.Dst):
		return f, s.errf(field+".dst", "%q must be an absolute guest path", rf.Dst)
	case rf.Dst == "/":
		return f, s.errf(field+".dst", "cannot be /")
	case path.Clean(rf.Dst) != rf.Dst || strings.HasSuffix(rf.Dst, "/"):
		return f, s.errf(field+".dst", "%q is not a clean path (want %q)", rf.Dst, path.Clean(rf.Dst))
	case strings.ContainsAny(rf.Dst, "\x00\n"):
		return f, s.errf(field+".dst", "%q contains a NUL or newline", rf.Dst)
	case rf.Dst == templateInfoPath:
		return f, s.errf(field+".dst", "%s is written by airlock", templateInfoPath)
	}
	// The agent mounts these over the root; anything copied there would be
	// hidden, which is surely not what the author meant.
	for _, m := range []string{"/proc", "/sys", "/dev", "/run", "/job"} {
		if rf.Dst == m || strings.HasPrefix(rf.Dst, m+"/") {
			return f, s.errf(field+".dst", "%q is under %s, which is not part of the image", rf.Dst, m)
		}
	}

	if rf.Mode != "" {
		if !modeRE.MatchString(rf.Mode) {
			return f, s.errf(field+".mode", "%q is not an octal file mode like \"0644\" or \"0755\"", rf.Mode)
		}
		m, err := strconv.ParseUint(rf.Mode, 8, 32)
		if err != nil || m > 0o7777 {
			return f, s.errf(field+".mode", "%q is not an octal file mode", rf.Mode)
		}
		f.Mode = fileModeFromUnix(uint32(m))
	}
	return f, nil
}

// fileModeFromUnix turns octal permission bits (with setuid/setgid/sticky)
// into an fs.FileMode.
func fileModeFromUnix(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// Resolve returns s flattened with its `from` chain: the parents' suite,
// packages, files, build commands, env and kernel_args come first and s
// appends (env: overrides) its own; scalar fields s leaves unset are
// inherited. lookup returns a parent by name (unresolved is fine). An
// unknown parent or a cycle is an InvalidArgument naming `from`.
func (s *Spec) Resolve(lookup func(name string) (*Spec, error)) (*Spec, error) {
	return s.resolve(lookup, nil)
}

func (s *Spec) resolve(lookup func(string) (*Spec, error), chain []string) (*Spec, error) {
	if s.resolved {
		return s, nil
	}
	chain = append(chain, s.Name)
	if len(chain) > maxInheritanceDepth {
		return nil, s.errf("from", "inheritance deeper than %d: %s", maxInheritanceDepth, strings.Join(chain, " -> "))
	}
	if contains(chain, s.From) {
		return nil, s.errf("from", "inheritance cycle: %s -> %s", strings.Join(chain, " -> "), s.From)
	}
	if lookup == nil {
		return nil, s.errf("from", "cannot resolve %q without a template lookup", s.From)
	}
	parent, err := lookup(s.From)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, s.errf("from", "unknown template %q", s.From)
		}
		return nil, fmt.Errorf("%s: from: %w", s.where("from"), err)
	}
	if parent.Name != s.From {
		return nil, s.errf("from", "lookup of %q returned template %q", s.From, parent.Name)
	}
	if parent, err = parent.resolve(lookup, chain); err != nil {
		return nil, err
	}
	return s.mergeOnto(parent)
}

// mergeOnto returns a new, resolved spec: parent (resolved) overlaid by s.
func (s *Spec) mergeOnto(parent *Spec) (*Spec, error) {
	out := &Spec{
		Name:  s.Name,
		From:  s.From,
		Path:  s.Path,
		Dir:   s.Dir,
		set:   s.set,
		lines: s.lines,
		// scalars: inherited unless s sets them
		Suite:             parent.Suite,
		Warmup:            parent.Warmup,
		MemoryMiB:         parent.MemoryMiB,
		VCPUs:             parent.VCPUs,
		DefaultTTLSeconds: parent.DefaultTTLSeconds,
		RootfsSizeMiB:     parent.RootfsSizeMiB,
		resolved:          true,
	}
	if s.set["suite"] {
		if s.Suite != parent.Suite {
			return nil, s.errf("suite", "%q differs from parent %q's suite %q", s.Suite, parent.Name, parent.Suite)
		}
	}
	if s.set["warmup"] {
		out.Warmup = s.Warmup
	}
	if s.set["memory_mib"] {
		out.MemoryMiB = s.MemoryMiB
	}
	if s.set["vcpus"] {
		out.VCPUs = s.VCPUs
	}
	if s.set["default_ttl_seconds"] {
		out.DefaultTTLSeconds = s.DefaultTTLSeconds
	}
	if s.set["rootfs_size_mib"] {
		out.RootfsSizeMiB = s.RootfsSizeMiB
	}

	seen := map[string]bool{}
	for _, from := range []*Spec{parent, s} {
		for i, p := range from.Packages {
			if !seen[p] {
				seen[p] = true
				out.Packages = append(out.Packages, p)
				out.pkgOrigins = append(out.pkgOrigins, from.pkgOrigin(i))
			}
		}
	}
	// A child's file replaces the parent's file at the same dst, in place.
	out.Files = append(out.Files, parent.Files...)
	for _, f := range s.Files {
		replaced := false
		for i := range out.Files {
			if out.Files[i].Dst == f.Dst {
				out.Files[i], replaced = f, true
			}
		}
		if !replaced {
			out.Files = append(out.Files, f)
		}
	}
	out.Build = append(append([]string(nil), parent.Build...), s.Build...)
	out.KernelArgs = append(append([]string(nil), parent.KernelArgs...), s.KernelArgs...)
	if len(parent.Env)+len(s.Env) > 0 {
		out.Env = map[string]string{}
		for k, v := range parent.Env {
			out.Env[k] = v
		}
		for k, v := range s.Env {
			out.Env[k] = v
		}
	}
	return out, nil
}

// pkgOrigin is where Packages[i] was declared.
func (s *Spec) pkgOrigin(i int) origin {
	if i < len(s.pkgOrigins) {
		return s.pkgOrigins[i]
	}
	return origin{source: s.source(), field: fmt.Sprintf("packages[%d]", i)}
}

// Resolved reports whether s is flattened (has no `from`, or went through
// Resolve).
func (s *Spec) Resolved() bool { return s.resolved }

// Hash returns a stable hex sha256 of the resolved spec: every field that
// shapes the template, plus the sha256 of every copied file's content, so
// editing a copied file changes the hash. Package order does not matter;
// file order, build order and kernel_args order do.
func (s *Spec) Hash() (string, error) {
	digests, err := s.fileDigests()
	if err != nil {
		return "", err
	}
	return s.hashWith(digests)
}

func (s *Spec) hashWith(digests []string) (string, error) {
	img, err := s.imageInput(digests)
	if err != nil {
		return "", err
	}
	return hashJSON(struct {
		Image             imageInput        `json:"image"`
		Name              string            `json:"name"`
		Build             []string          `json:"build"`
		Warmup            string            `json:"warmup"`
		Env               map[string]string `json:"env"`
		MemoryMiB         int               `json:"memory_mib"`
		VCPUs             int               `json:"vcpus"`
		KernelArgs        []string          `json:"kernel_args"`
		DefaultTTLSeconds int               `json:"default_ttl_seconds"`
	}{
		Image: img, Name: s.Name, Build: s.Build, Warmup: s.Warmup,
		Env: s.Env, MemoryMiB: s.MemoryMiB, VCPUs: s.VCPUs, KernelArgs: s.KernelArgs,
		DefaultTTLSeconds: s.DefaultTTLSeconds,
	})
}

// hashJSON is the hex sha256 of v's JSON (map keys sorted: stable).
func hashJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ImageHash returns a stable hex sha256 of what goes into the spec's root
// image: suite, packages (order-insensitive), size and copied files with
// their content. Build steps, warm-up, env and machine shape run in the VM
// and are not part of it.
func (s *Spec) ImageHash() (string, error) {
	digests, err := s.fileDigests()
	if err != nil {
		return "", err
	}
	return s.imageHashWith(digests)
}

func (s *Spec) imageHashWith(digests []string) (string, error) {
	img, err := s.imageInput(digests)
	if err != nil {
		return "", err
	}
	return hashJSON(img)
}

// imageInput is everything that shapes the root image.
type imageInput struct {
	V             int         `json:"v"`
	Suite         string      `json:"suite"`
	Packages      []string    `json:"packages"` // sorted
	Files         []hashInput `json:"files"`
	RootfsSizeMiB int         `json:"rootfs_size_mib"`
}

type hashInput struct {
	Dst    string `json:"dst"`
	Mode   uint32 `json:"mode"`
	SHA256 string `json:"sha256"`
}

func (s *Spec) imageInput(digests []string) (imageInput, error) {
	if !s.resolved {
		return imageInput{}, errdefs.FailedPrecondition("template %q: hash before its `from` is resolved", s.Name)
	}
	in := imageInput{V: hashSchemeVersion, Suite: s.Suite, RootfsSizeMiB: s.RootfsSizeMiB}
	in.Packages = append([]string(nil), s.Packages...)
	sort.Strings(in.Packages)
	for i, f := range s.Files {
		in.Files = append(in.Files, hashInput{Dst: f.Dst, Mode: unixMode(f.Mode), SHA256: digests[i]})
	}
	return in, nil
}

// fileDigests returns the sha256 of each of s.Files, in order.
func (s *Spec) fileDigests() ([]string, error) {
	out := make([]string, len(s.Files))
	for i, f := range s.Files {
		r, err := f.open()
		if err != nil {
			return nil, fmt.Errorf("template %q: files[%d] %s: %w", s.Name, i, f.Src, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("template %q: hash %s: %w", s.Name, f.Src, err)
		}
		out[i] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// open opens the file's source confined to its spec's directory (os.Root
// refuses symlinks that lead outside it), so a symlink swapped in after
// validation still cannot reach outside.
func (f File) open() (*os.File, error) {
	var r *os.File
	var err error
	if f.tool != "" {
		r, err = os.Open(f.tool)
	} else {
		r, err = os.OpenInRoot(f.dir, filepath.Clean(f.Src))
	}
	if err != nil {
		return nil, errdefs.InvalidArgument("%s: %v", f.Src, err)
	}
	st, err := r.Stat()
	if err != nil || !st.Mode().IsRegular() {
		r.Close()
		return nil, errdefs.InvalidArgument("%s is not a regular file", f.Src)
	}
	return r, nil
}

func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// source names the spec in errors.
func (s *Spec) source() string {
	if s.Path != "" {
		return s.Path
	}
	return inlineSourceName
}

// where is "file:line" for a field path, or just "file" without a line.
// An absent field ("files[0].dst: is required") takes its parent's line.
func (s *Spec) where(field string) string {
	for f := field; f != ""; f = parentField(f) {
		if n := s.lines[f]; n > 0 {
			return fmt.Sprintf("%s:%d", s.source(), n)
		}
	}
	return s.source()
}

// parentField is "files[0]" for "files[0].dst", "files" for "files[0]".
func parentField(f string) string {
	if i := strings.LastIndexAny(f, ".["); i > 0 {
		return f[:i]
	}
	return ""
}

// errf returns an InvalidArgument "file:line: field: message".
func (s *Spec) errf(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if field == "" {
		return errdefs.InvalidArgument("%s: %s", s.source(), msg)
	}
	return errdefs.InvalidArgument("%s: %s: %s", s.where(field), field, msg)
}

// yamlErr rewrites a yaml.v3 error into "file:line: field: message".
func (s *Spec) yamlErr(err error) error {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	byLine := map[int]string{}
	for field, line := range s.lines {
		// The deepest path on a line names the field best ("files[0].src"
		// over "files[0]").
		if cur, ok := byLine[line]; !ok || len(field) > len(cur) || (len(field) == len(cur) && field < cur) {
			byLine[line] = field
		}
	}
	var out []string
	for _, m := range msgs {
		sub := yamlLine.FindStringSubmatch(m)
		if sub == nil {
			out = append(out, fmt.Sprintf("%s: %s", s.source(), strings.TrimPrefix(m, "yaml: ")))
			continue
		}
		line, _ := strconv.Atoi(sub[1])
		text := sub[2]
		field, known := byLine[line]
		if f := yamlField.FindStringSubmatch(text); f != nil {
			text = fmt.Sprintf("unknown field %q", f[1])
			// Name the key itself, not a list item on the same line.
			best := ""
			for p, l := range s.lines {
				if l == line && (p == f[1] || strings.HasSuffix(p, "."+f[1])) && (best == "" || len(p) < len(best)) {
					best = p
				}
			}
			if best != "" {
				field, known = best, true
			}
		}
		if known {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", s.source(), line, field, text))
		} else {
			out = append(out, fmt.Sprintf("%s:%d: %s", s.source(), line, text))
		}
	}
	return errdefs.InvalidArgument("%s", strings.Join(out, "; "))
}

// indexLines records the line of every field path under n: mapping keys
// as "a.b", sequence items as "a[3]".
func indexLines(n *yaml.Node, prefix string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if prefix != "" {
				p = prefix + "." + k.Value
			}
			lines[p] = k.Line
			indexLines(v, p, lines)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			lines[p] = item.Line
			indexLines(item, p, lines)
		}
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
