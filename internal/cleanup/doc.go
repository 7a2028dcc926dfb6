// Package cleanup undoes a resource built in steps when a later step
// fails. A Stack collects one undo per resource the moment that resource
// exists; Clean runs them newest first (a VM goes before the network slot
// it is attached to) and joins their errors; Release hands everything to
// the caller once the whole build succeeded, after which Clean does
// nothing. The usual shape:
//
//	var cu cleanup.Stack
//	defer func() { log(cu.Clean(ctx)) }() // a no-op after Release
//	slot, err := acquire(ctx)
//	if err != nil {
//		return err
//	}
//	cu.Add(func(context.Context) error { return release(slot) })
//	...
//	cu.Release()
//
// Undos run with ctx's values but never its cancellation or deadline: a
// build often fails precisely because its context ended, and what it made
// must go all the same. An undo that must be bounded sets its own timeout.
//
// A Stack is not safe for concurrent use; steps that run in parallel each
// keep their own and the owner adds their Clean afterwards.
//
// It owns no resources and knows none: it never logs, retries or decides
// whether an undo's error matters (that is the caller's).
package cleanup
