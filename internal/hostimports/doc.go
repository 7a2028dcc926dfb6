// Package hostimports holds the test that makes "the host never parses a
// document" a property of the build rather than a sentence: no host
// binary (cmd/airlock, cmd/airlock-jailer and every package the daemon is
// made of) links code that opens documents.
//
// The rule it enforces, over `go list -deps` of the whole module:
//
//   - Guest-side packages are the document tools (internal/docs/...,
//     cmd/airlock-docs), the guest agent (internal/guest/agent,
//     cmd/airlock-agent) and the evaluation tree (internal/docseval/...,
//     checked through the host binaries that link parts of it). Every other
//     package in the module is host code.
//   - Host code may link, of internal/docs, only the contract packages:
//     internal/docs itself (the envelope and error codes), each job's
//     result package, review/playbook and redact/policy (operator
//     configuration), review/report (renders a validated result) and
//     imagewrite (encodes images, never decodes one). Contract packages
//     import only the standard library, each other and gopkg.in/yaml.v3.
//   - The guest tool cmd/airlock-docs links nothing of internal/docseval
//     and no test fonts, so template hashes do not move with the
//     generators.
//
// The package has no code of its own; testdata/badhost is a host-shaped
// program that breaks the rule, and the test checks that the rule catches
// it.
package hostimports
