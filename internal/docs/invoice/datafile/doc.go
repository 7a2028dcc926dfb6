// Package datafile decodes the invoice job's YAML data files (labels,
// phrases, vendor templates) strictly: unknown keys, duplicate keys,
// trailing documents and type mismatches are errors, and every error reads
// "file:line: message" so whoever edits a template can find the mistake.
// It knows nothing about what the files mean.
package datafile
