package cleanup

import (
	"context"
	"errors"
)

// Stack is the undo list of a build in progress; the zero value is empty
// and ready to use.
type Stack struct {
	undo []func(context.Context) error // run newest first
}

// Add registers the undo of a resource that now exists.
func (s *Stack) Add(undo func(context.Context) error) { s.undo = append(s.undo, undo) }

// AddFunc registers an undo that cannot fail.
func (s *Stack) AddFunc(undo func()) {
	s.Add(func(context.Context) error { undo(); return nil })
}

// Release forgets every undo: the caller now owns the resources.
func (s *Stack) Release() { s.undo = nil }

// Len is how many undos are registered.
func (s *Stack) Len() int { return len(s.undo) }

// Clean runs every undo, newest first, even after one fails, with ctx
// stripped of its cancellation, and returns their errors joined (nil when
// all succeeded or nothing was registered). The stack is empty afterwards.
func (s *Stack) Clean(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for i := len(s.undo) - 1; i >= 0; i-- {
		errs = append(errs, s.undo[i](ctx))
	}
	s.undo = nil
	return errors.Join(errs...)
}
