// Package report renders contract-review results for people: a
// self-contained HTML report per document, an HTML index of a batch, and
// Markdown for terminals and tickets.
//
// It imports only the standard library and the result package, so the
// host can render what a guest returned without the analysis code. A
// Result may come from a compromised guest and every string in it is
// hostile: HTML goes through html/template's contextual escaping, carries
// a Content-Security-Policy, and has no script and no external resource;
// Markdown is escaped and stripped of control characters, so neither a
// browser nor a terminal runs anything from a contract. It must never
// fetch anything, and never emit a result's text unescaped.
package report
