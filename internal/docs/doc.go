// Package docs holds what the document jobs (contract review, invoice
// extraction, PII redaction) share on the guest side: the result envelope
// every job writes, the closed set of job error codes, and the limits a
// job runs under. The jobs themselves live in the sub-packages (extract,
// review, invoice, redact, verify) and are driven by cmd/airlock-docs, the
// static tool baked into the document templates.
//
// Conventions every job follows (the host runner in internal/jobs relies
// on them):
//
//   - Inputs are under /job/in (the document, and the job's own inputs such
//     as a playbook or a policy); the tool writes exactly one result JSON
//     (default /job/out/result.json) and, for redaction, the output file
//     under /job/out.
//   - The result is an Envelope: it names the job, says ok or carries one
//     classified Error, and holds the job's own fields. It never carries
//     more document text than the job's contract allows (review: clause
//     text and redlines; invoice: field values; redaction: offsets only,
//     never the original values).
//   - The process exits 0 when the job ran to a result (even a result that
//     says ok=false with a classified error), 2 on usage errors, and 1 only
//     when it could not write a result at all.
//
// Host code (the CLI and the daemon) links only the contract packages:
// this one (the envelope and error codes), each job's result package,
// review/playbook and redact/policy (operator configuration the host checks
// before a job), review/report (renders a validated result) and imagewrite
// (encodes images). They import only the standard library, each other and
// a YAML parser. internal/hostimports fails the build's tests if any host
// package links anything else under internal/docs. Generators, test
// documents and eval scoring live apart, under internal/docseval.
package docs
