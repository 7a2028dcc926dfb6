// Package result is the output contract of the contract-review job: the
// Result the guest writes inside the docs.Envelope, and the strict Decode
// and Validate the host uses on it.
//
// It owns the JSON shape (snake_case tags, the closed sets of statuses,
// severities, locators and redline ops) and the size limits. It imports
// only the standard library on purpose: the host imports it to check what
// an untrusted guest wrote, and must not pull in the analysis code (YAML,
// difflib, text normalisation) to do so.
//
// It must never parse documents or playbooks, and never trust a Result it
// did not Validate: everything in it may have been written by a
// compromised guest.
package result
