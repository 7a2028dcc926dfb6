// Package policy is the redaction policy: which entity types are detected,
// the score each needs and how each is redacted (replace, mask, hash,
// remove). Parse reads the operator's YAML or JSON strictly, with line
// numbers in every error; the host checks a policy with it before a batch
// starts, and the guest tool parses the same bytes again before it runs.
//
// It is a contract package: standard library, the redaction result types
// and a YAML parser only, so the host may link it (internal/hostimports).
// The detectors and operators that apply a policy are in the parent
// package, inside the sandbox.
package policy
