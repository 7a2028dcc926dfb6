package template

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/image"
)

func parse(data []byte, dir, file string) (*Spec, error) {
	if dir == "" {
		dir = "."
	}
	return parseSpec(&Spec{Path: file, Dir: dir, set: map[string]bool{}, lines: map[string]int{}}, data)
}

// parseShipped parses one of the specs built into airlock; file names it
// in errors.
func parseShipped(data []byte, file string) (*Spec, error) {
	return parseSpec(&Spec{Path: file, shipped: true, set: map[string]bool{}, lines: map[string]int{}}, data)
}

func parseSpec(s *Spec, data []byte) (*Spec, error) {
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
// defaults. Fields are checked in the order a spec lists them, so the
// first error a user sees is the first one in the file.
func (s *Spec) fill(raw *rawSpec) error {
	for _, step := range []func(*rawSpec) error{
		s.fillIdentity, s.fillImage, s.fillPackages, s.fillFiles, s.fillCommands, s.fillEnv, s.fillWorkdir, s.fillSizes, s.fillKernelArgs,
	} {
		if err := step(raw); err != nil {
			return err
		}
	}
	return nil
}

// fillIdentity checks name, from and suite.
func (s *Spec) fillIdentity(raw *rawSpec) error {
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
	return nil
}

// fillImage checks image: a reference to a container image on this host,
// which replaces the Debian base (suite, packages).
func (s *Spec) fillImage(raw *rawSpec) error {
	if raw.Image == nil {
		return nil
	}
	s.set["image"] = true
	ref, err := parseImageRef(*raw.Image, s.Dir, s.shipped)
	if err != nil {
		return s.errf("image", "%v", err)
	}
	s.Image = ref
	if raw.Suite != nil {
		return s.errf("suite", "cannot be set with image: the root comes from the image, not from Debian")
	}
	s.Suite = ""
	return nil
}

// fillPackages checks packages: valid Debian names, none twice.
func (s *Spec) fillPackages(raw *rawSpec) error {
	if s.Image.IsSet() && len(raw.Packages) > 0 {
		return s.errf("packages", "cannot be set with image: install packages in the image, or with a build step")
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
	return nil
}

// fillFiles checks files: each entry (checkFile), no dst twice.
func (s *Spec) fillFiles(raw *rawSpec) error {
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
	return nil
}

// fillCommands checks build and warmup.
func (s *Spec) fillCommands(raw *rawSpec) error {
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
		if raw.Warmup.shell != nil {
			s.Warmup = *raw.Warmup.shell
			if strings.ContainsRune(s.Warmup, 0) {
				return s.errf("warmup", "contains a NUL byte")
			}
		}
		for i, argv := range raw.Warmup.argv {
			field := fmt.Sprintf("warmup[%d]", i)
			if len(argv) == 0 || argv[0] == "" {
				return s.errf(field, "is empty (want [program, args...])")
			}
			for _, w := range argv {
				if strings.ContainsRune(w, 0) {
					return s.errf(field, "contains a NUL byte")
				}
			}
			s.WarmupExec = append(s.WarmupExec, argv)
		}
	}
	return s.fillKeep(raw)
}

// fillKeep checks keep: absolute, clean guest paths, none twice, and a
// spec that keeps a minimal root has no shell to run build steps or a
// warm-up given as a shell command in.
func (s *Spec) fillKeep(raw *rawSpec) error {
	seen := map[string]bool{}
	for i, p := range raw.Keep {
		field := fmt.Sprintf("keep[%d]", i)
		switch {
		case !path.IsAbs(p) || path.Clean(p) != p || p == "/":
			return s.errf(field, "%q must be an absolute, clean guest path (not /)", p)
		case strings.ContainsAny(p, "\x00\n"):
			return s.errf(field, "%q contains a NUL or newline", p)
		case seen[p]:
			return s.errf(field, "%q is listed twice", p)
		}
		seen[p] = true
		s.Keep = append(s.Keep, p)
	}
	if len(s.Keep) > 0 && s.Image.IsSet() {
		return s.errf("keep", "cannot be set with image: a minimal root is cut from a Debian root")
	}
	return s.checkMinimal()
}

// checkMinimal refuses what a minimal root (keep) cannot run: it has no
// shell, so no build steps and no warm-up given as a shell command.
func (s *Spec) checkMinimal() error {
	switch {
	case len(s.Keep) == 0:
		return nil
	case len(s.Build) > 0:
		return s.errf("build", "a minimal root (keep) has no shell to run build steps in")
	case s.Warmup != "":
		return s.errf("warmup", "a minimal root (keep) has no shell: give the warm-up as a list of argv lists, e.g. [[tool, --version]]")
	}
	return nil
}

// fillEnv checks env, in key order.
func (s *Spec) fillEnv(raw *rawSpec) error {
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
	return nil
}

// fillWorkdir checks workdir: an absolute, clean guest path.
func (s *Spec) fillWorkdir(raw *rawSpec) error {
	if raw.Workdir == nil {
		return nil
	}
	s.set["workdir"] = true
	w := *raw.Workdir
	switch {
	case !path.IsAbs(w):
		return s.errf("workdir", "%q must be an absolute guest path", w)
	case path.Clean(w) != w:
		return s.errf("workdir", "%q is not a clean path (want %q)", w, path.Clean(w))
	case strings.ContainsAny(w, "\x00\n"):
		return s.errf("workdir", "%q contains a NUL or newline", w)
	}
	s.Workdir = w
	return nil
}

// fillSizes checks the integer fields against their ranges and applies
// their defaults.
func (s *Spec) fillSizes(raw *rawSpec) error {
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
	return nil
}

// fillKernelArgs checks kernel_args: one word each.
func (s *Spec) fillKernelArgs(raw *rawSpec) error {
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
	if s.shipped {
		return f, s.errf(field+".src", "%q: a spec built into airlock can copy only airlock's own tools (%s<name>)", rf.Src, ToolScheme)
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
