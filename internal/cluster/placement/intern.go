package placement

// interner numbers the strings a decision would otherwise compare on
// every node it looks at. Its tables only grow, by what nodes report:
// builds of the catalog, host classes, capability names.
type interner struct {
	builds  map[string]int32
	classes map[string]int32
	caps    map[string]uint64 // a bit each, for the first 64 names
}

func newInterner() interner {
	return interner{builds: map[string]int32{}, classes: map[string]int32{}, caps: map[string]uint64{}}
}

func intern(m map[string]int32, s string) int32 {
	id, ok := m[s]
	if !ok {
		id = int32(len(m))
		m[s] = id
	}
	return id
}

func (in *interner) build(b string) int32 { return intern(in.builds, b) }
func (in *interner) class(c string) int32 { return intern(in.classes, c) }

// capMask is the bits of the names in caps that have one, giving one to
// each new name while there are bits left.
func (in *interner) capMask(caps []string) uint64 {
	var m uint64
	for _, c := range caps {
		bit, ok := in.caps[c]
		if !ok && len(in.caps) < 64 {
			bit = 1 << len(in.caps)
			in.caps[c] = bit
		}
		m |= bit
	}
	return m
}

// want is a request in the terms of the interned tables, worked out once
// per decision.
type want struct {
	req   *Request
	build int32 // -1: no node ever reported the build
	// class is the host class's id, anyClass if the request takes any, or
	// noClass if no node ever reported the class.
	class int32
	caps  uint64
	// capsByName: some capability of the request has no bit (none was
	// left when it was first seen, or no node has it), so nodes are
	// tested by name.
	capsByName bool
}

const (
	anyClass int32 = -1
	noClass  int32 = -2
)

// wantOf looks req up in the tables without adding to them: a request
// names what it likes, and only nodes grow the tables. Called with mu held.
func (in *interner) wantOf(req *Request) want {
	w := want{req: req, build: -1, class: anyClass}
	if id, ok := in.builds[req.Build]; ok {
		w.build = id
	}
	if req.HostClass != "" {
		w.class = noClass
		if id, ok := in.classes[req.HostClass]; ok {
			w.class = id
		}
	}
	for _, c := range req.Capabilities {
		bit, ok := in.caps[c]
		if !ok {
			w.capsByName = true
		}
		w.caps |= bit
	}
	return w
}
