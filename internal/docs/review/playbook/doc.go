// Package playbook is a firm's standard clauses for the contract-review
// job: the Playbook types, parsing (JSON or YAML, with file:line errors
// for real mistakes; the documented descriptive fields description and
// notes accepted; fields nobody documented warned about and ignored, or
// refused when the caller asks for strict parsing, since playbooks are
// often exported from other systems), the inheritance of the built-in
// clauses' headings, titles, severities and guidance, and the embedded
// default playbook (default_playbook.yaml).
//
// A playbook is the user's configuration, not a document: the host parses
// it to refuse a bad one before any sandbox is made, and the guest parses
// it again for the analysis (package review). It imports only the
// standard library, yaml.v3 and the result contract, so the host links no
// analysis code through it (internal/hostimports holds that line).
//
// What it must never do: read any file but the playbook it is handed, or
// look at a contract.
package playbook
