package netpool

import "errors"

// cleanup collects undo functions as resources come into existence (the
// gVisor runsc pattern): defer c.clean() right after creating it, and
// c.release() once everything succeeded so the undos are dropped.
type cleanup struct {
	undo []func() error // run in reverse order
}

func (c *cleanup) add(f func() error) { c.undo = append(c.undo, f) }

// release forgets the undos: the caller now owns the resources.
func (c *cleanup) release() { c.undo = nil }

// clean runs the undos newest first and returns their joined errors.
func (c *cleanup) clean() error {
	var errs []error
	for i := len(c.undo) - 1; i >= 0; i-- {
		errs = append(errs, c.undo[i]())
	}
	c.undo = nil
	return errors.Join(errs...)
}
