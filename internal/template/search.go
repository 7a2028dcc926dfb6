package template

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/templates"
)

// PathEnv is the environment variable holding extra template directories,
// colon-separated, searched after --template-path and before ./templates
// and the shipped templates.
const PathEnv = "AIRLOCK_TEMPLATE_PATH"

// dirSpecFile is the spec of a template kept in a directory of its own
// (DIR/NAME/template.yaml), beside the files and images it names.
const dirSpecFile = "template.yaml"

// SearchPath is an ordered list of template directories. A name is looked
// up in each directory in turn, as DIR/NAME.yaml or DIR/NAME/template.yaml,
// and last among the specs built into airlock (package templates), which
// are on every path. The first match wins.
type SearchPath struct {
	dirs []string
}

// NewSearchPath returns a path of dirs (in order) followed by the shipped
// templates. Empty entries are dropped.
func NewSearchPath(dirs ...string) *SearchPath {
	p := &SearchPath{}
	for _, d := range dirs {
		if d != "" {
			p.dirs = append(p.dirs, filepath.Clean(d))
		}
	}
	return p
}

// DefaultSearchPath is the path the CLI uses: the entries of flagPath
// (each colon-separated), then $AIRLOCK_TEMPLATE_PATH, then ./templates if
// the current directory has one, then the shipped templates.
func DefaultSearchPath(flagPath []string) *SearchPath {
	var dirs []string
	for _, f := range flagPath {
		dirs = append(dirs, filepath.SplitList(f)...)
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv(PathEnv))...)
	if st, err := os.Stat("templates"); err == nil && st.IsDir() {
		dirs = append(dirs, "templates")
	}
	return NewSearchPath(dirs...)
}

// Dirs are the directories searched, in order, before the shipped specs.
func (p *SearchPath) Dirs() []string { return append([]string(nil), p.dirs...) }

// Prepend returns a copy of p with dir searched first.
func (p *SearchPath) Prepend(dir string) *SearchPath {
	return NewSearchPath(append([]string{dir}, p.dirs...)...)
}

// String names every place searched, in order, for error messages.
func (p *SearchPath) String() string {
	return strings.Join(append(p.Dirs(), "the templates built into airlock"), ", ")
}

// Find loads the spec of template name from the first place on the path
// that has it. The file must name the template it is found by. A name
// found nowhere is NotFound, listing where it was looked for.
func (p *SearchPath) Find(name string) (*Spec, error) {
	if !nameRE.MatchString(name) {
		return nil, errdefs.InvalidArgument("%q is not a valid template name", name)
	}
	for _, d := range p.dirs {
		file, err := specFileIn(d, name)
		if err != nil {
			return nil, err
		}
		if file != "" {
			return loadNamed(file, name)
		}
	}
	data, err := fs.ReadFile(templates.Shipped, name+specFileExt)
	if err == nil {
		s, err := parseShipped(data, builtinPrefix+name+specFileExt)
		if err != nil {
			return nil, err
		}
		return s, checkNamed(s, name)
	}
	return nil, errdefs.NotFound("template %q not found: looked for %s%s and %s/%s in %s",
		name, name, specFileExt, name, dirSpecFile, p)
}

// specFileIn is dir's spec file for name ("" if it has none). Having both
// layouts for one name is ambiguous, and an error.
func specFileIn(dir, name string) (string, error) {
	flat := filepath.Join(dir, name+specFileExt)
	nested := filepath.Join(dir, name, dirSpecFile)
	_, ferr := os.Stat(flat)
	_, nerr := os.Stat(nested)
	switch {
	case ferr == nil && nerr == nil:
		return "", errdefs.InvalidArgument("template %q is both %s and %s: remove one", name, flat, nested)
	case ferr == nil:
		return flat, nil
	case nerr == nil:
		return nested, nil
	case !errors.Is(ferr, fs.ErrNotExist):
		return "", fmt.Errorf("template %q: %w", name, ferr)
	case !errors.Is(nerr, fs.ErrNotExist):
		return "", fmt.Errorf("template %q: %w", name, nerr)
	}
	return "", nil
}

func loadNamed(file, name string) (*Spec, error) {
	s, err := Load(file)
	if err != nil {
		return nil, err
	}
	return s, checkNamed(s, name)
}

func checkNamed(s *Spec, name string) error {
	if s.Name != name {
		return errdefs.InvalidArgument("%s: name: %q does not match the file name (want %q)", s.source(), s.Name, name)
	}
	return nil
}

// Lookup is Find as a lookup for Resolve.
func (p *SearchPath) Lookup() func(name string) (*Spec, error) { return p.Find }

// Load loads what arg names, resolved: a template name along the path, or
// (anything with a '/', or ending .yaml/.yml) a spec file or a directory
// holding template.yaml. A spec given by path finds its `from` in its own
// directory (for DIR/template.yaml: beside DIR) first, then along p.
func (p *SearchPath) Load(arg string) (*Spec, error) {
	if !IsPathArg(arg) {
		s, err := p.Find(arg)
		if err != nil {
			return nil, err
		}
		return s.Resolve(p.Lookup())
	}
	file := arg
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		file = filepath.Join(arg, dirSpecFile)
	}
	s, err := Load(file)
	if err != nil {
		return nil, err
	}
	home := filepath.Dir(file)
	if filepath.Base(file) == dirSpecFile {
		home = filepath.Dir(home)
	} else if want := specName(file); s.Name != want {
		return nil, errdefs.InvalidArgument("%s: name: %q does not match the file name (want %q)", s.source(), s.Name, want)
	}
	return s.Resolve(p.Prepend(home).Lookup())
}

// IsPathArg reports whether a build argument names a file or directory
// rather than a template: it has a '/' or ends in .yaml or .yml, or is
// "." or "..".
func IsPathArg(arg string) bool {
	return strings.ContainsRune(arg, '/') || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") ||
		arg == "." || arg == ".."
}

func specName(file string) string {
	b := filepath.Base(file)
	return strings.TrimSuffix(strings.TrimSuffix(b, ".yaml"), ".yml")
}

// Available is one spec found on a search path.
type Available struct {
	Name     string `json:"name"`
	Source   string `json:"source"`             // spec file, or builtin:NAME.yaml
	Shadowed bool   `json:"shadowed,omitempty"` // an earlier place on the path has the same name
}

// List returns every spec on the path, by name and then in path order;
// all but the first of a name are Shadowed. Specs are not parsed.
func (p *SearchPath) List() ([]Available, error) {
	var out []Available
	seen := map[string]bool{}
	add := func(name, source string) {
		out = append(out, Available{Name: name, Source: source, Shadowed: seen[name]})
		seen[name] = true
	}
	for _, d := range p.dirs {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("template path %s: %w", d, err)
		}
		for _, e := range entries {
			name, file := e.Name(), ""
			if e.IsDir() {
				file = filepath.Join(d, name, dirSpecFile)
				if _, err := os.Stat(file); err != nil {
					continue
				}
			} else if strings.HasSuffix(name, specFileExt) {
				name, file = strings.TrimSuffix(name, specFileExt), filepath.Join(d, name)
			}
			if file == "" || !nameRE.MatchString(name) {
				continue
			}
			if abs, err := filepath.Abs(file); err == nil {
				file = abs
			}
			add(name, file)
		}
	}
	shipped, err := fs.Glob(templates.Shipped, "*"+specFileExt)
	if err != nil {
		return nil, err
	}
	for _, f := range shipped {
		add(strings.TrimSuffix(f, specFileExt), builtinPrefix+f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
