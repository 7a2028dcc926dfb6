// Package result is the invoice job's guest -> host contract: the Result
// the guest writes (inside the docs envelope) and the closed sets of names
// it may use (field names, extraction methods, issues, hidden-text kinds,
// injection phrase codes) with their size limits.
//
// It owns only types and constants, imports only the standard library, and
// is the one invoice package the host (internal/jobs/invoicecheck) may
// import. It must never grow parsing, extraction or decision logic, and the
// Result must never gain an approval, status or decision field: the guest
// extracts and reports, the host decides.
package result
