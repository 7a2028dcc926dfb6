package template

// Stamped reports whether t's stamp vouches for its files now: what Open
// in a new process would trust without hashing.
func (r *Registry) Stamped(t *Template) bool {
	_, ok := r.stamped(t, []string{t.StatePath(), t.MemPath(), t.RootImage})
	return ok
}
