// Package nlp is the redactor's text layer, what Presidio calls its NLP
// engine and context enhancer: it cuts text into tokens (letters, marks
// and digits, CJK runs apart), folds words for list lookups (marks,
// case and apostrophes dropped), finds context phrases ("date of
// birth", "Patient:") with a phrase trie, and says for a candidate span
// whether the nearest label before it names the candidate's type
// (ContextFor). A Window bundles one piece of text with its tokens and
// labels; recognizers read windows.
//
// It knows no entity, word list or pattern: the phrases come from the
// recognizer registry's data (internal/docs/redact/recognizer). Like
// the rest of internal/docs/redact it runs only inside the guest.
package nlp
