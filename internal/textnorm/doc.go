// Package textnorm folds document text for matching: compatibility forms,
// case, diacritics, common Cyrillic/Greek look-alikes and zero-width
// characters, so a label or an injected instruction cannot dodge a matcher
// with "Ιgnore" (Greek iota) or "pre\u00adapproved". It only transforms
// strings; it never decides anything.
package textnorm
