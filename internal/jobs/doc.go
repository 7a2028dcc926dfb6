// Package jobs is the host side of the document jobs: one runner for
// every job (a fresh sandbox per document with egress denied and proven
// closed, bounded concurrency, progress, per-phase timings, NDJSON lines
// in input order, a summary) and, per job, the strict validation of what
// comes back from the guest.
//
// It never opens a document: a document is bytes streamed from a file
// into a sandbox (hashed on the way to name it in audit records). What
// comes back is small JSON, size-limited and decoded strictly, and the
// output files a job releases. Error lines carry classified codes
// (docs.Code* from the guest, Code* here for the platform's own failures)
// and never document content.
//
// Publishing (publish.go, review --publish) is the one exception to
// "egress denied": after a document's result is validated, the host
// renders its report and PUTs it from a second, fresh sandbox that never
// held the document and may reach only the target, which must be one of
// the tenant's credential routes (CreateOptions.Routes): the egress proxy
// holds the credential, and any other host refuses the sandbox.
package jobs
