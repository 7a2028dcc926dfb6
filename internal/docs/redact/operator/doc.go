// Package operator holds the redactor's operators, as Presidio's
// anonymizer does: what a finding's value becomes, per type, as the job's
// policy (internal/docs/redact/policy) says: replace ("<TYPE>"), mask
// (every letter and digit but the last few, separators kept), hash
// (HMAC-SHA256 under the job's salt, so equal values in one job read
// equally and across jobs do not) or remove. It never keeps a value.
package operator
