package redactcorpus

import (
	"strings"
	"unicode/utf8"
)

// Types of ground-truth spans (the redactor's entity types).
const (
	Person        = "PERSON"
	Email         = "EMAIL"
	Phone         = "PHONE"
	SSN           = "US_SSN"
	CreditCard    = "CREDIT_CARD"
	IBAN          = "IBAN"
	IPAddress     = "IP_ADDRESS"
	DateOfBirth   = "DATE_OF_BIRTH"
	StreetAddress = "STREET_ADDRESS"
	BankAccount   = "US_BANK_ACCOUNT"
	BankRouting   = "US_BANK_ROUTING"
	Passport      = "US_PASSPORT"
	DriverLicense = "US_DRIVER_LICENSE"
)

// Types lists the span types in report order.
var Types = []string{Person, Email, Phone, SSN, CreditCard, IBAN, IPAddress, DateOfBirth,
	StreetAddress, BankAccount, BankRouting, Passport, DriverLicense}

// Span is ground truth: [Start, End) in Unicode code points of Doc.Text.
type Span struct {
	Type  string `json:"type"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Doc is one corpus document.
type Doc struct {
	Name   string
	Format string // "text", "json", "csv" or "page"
	Text   string // the exact file content (for "page": the page text, lines joined by "\n", pages by "\f")
	Spans  []Span
	// NearMisses counts the near-miss values placed in the document, by
	// kind; none of them may be found.
	NearMisses map[string]int
	// Page is set for page documents.
	Page *PageDoc
	// Canaries are the corpus canary strings planted in this document,
	// each as (part of) an entity of the truth.
	Canaries []string
}

// builder appends text and records spans in code points.
type builder struct {
	b        strings.Builder
	cp       int
	spans    []Span
	near     map[string]int
	canaries []string
}

func newBuilder() *builder { return &builder{near: map[string]int{}} }

func (b *builder) text(s string) *builder {
	b.b.WriteString(s)
	b.cp += utf8.RuneCountInString(s)
	return b
}

// pii appends s as an entity of type t.
func (b *builder) pii(t, s string) *builder {
	start := b.cp
	b.text(s)
	b.spans = append(b.spans, Span{t, start, b.cp})
	return b
}

// miss appends a near miss of the given kind.
func (b *builder) miss(kind, s string) *builder {
	b.near[kind]++
	return b.text(s)
}

func (b *builder) doc(name, format string) Doc {
	return Doc{Name: name, Format: format, Text: b.b.String(), Spans: b.spans, NearMisses: b.near, Canaries: b.canaries}
}

// slot returns the value for a document's slot of type t: the canary
// planted in this document for that type, if one is still waiting (and
// records it as planted), else def.
func (g *gen) slot(b *builder, t, def string) string {
	c, ok := g.plant[t]
	if !ok {
		return def
	}
	delete(g.plant, t)
	b.canaries = append(b.canaries, c)
	return c
}
