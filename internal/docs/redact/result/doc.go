// Package result is the redaction job's result format: what the guest
// tool writes inside the envelope's "result" and what the host decodes.
// It is the only part of the redaction code the host imports, so it is
// standard library only, decodes strictly (unknown fields, trailing data,
// oversize input, out-of-range offsets and unknown types are errors) and
// never carries document text: findings are offsets and types, plus a
// salted hash only when the job's policy asked for one.
package result
