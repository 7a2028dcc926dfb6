package redact

import (
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Type is an entity type (see policy.Type); the detectors also use a few
// internal labels of the same type that never become findings.
type Type = policy.Type

// The entity types the detectors find, named here for the detectors' use.
const (
	Person        = policy.Person
	Email         = policy.Email
	Phone         = policy.Phone
	SSN           = policy.SSN
	CreditCard    = policy.CreditCard
	IBAN          = policy.IBAN
	IPAddress     = policy.IPAddress
	DateOfBirth   = policy.DateOfBirth
	StreetAddress = policy.StreetAddress
	BankAccount   = policy.BankAccount
	BankRouting   = policy.BankRouting
	Passport      = policy.Passport
	DriverLicense = policy.DriverLicense
)

// Labels the context lists use; never findings.
const (
	negativeLabel Type = "negative"        // context.yaml's "negative" list, never a finding
	personLabel   Type = "person_label"    // "Name:", any name-ish words follow
	personRole    Type = "person_role"     // "Patient:", list-backed names follow
	personOpener  Type = "person_opener"   // "Dear", capitalised names follow
	personCue     Type = "person_cue"      // "please contact", "case officer": name-shaped words follow
	nonPerson     Type = "non_person_name" // "Company Name:", nothing follows
)

// Finding is one detected (and redacted) span; see result.Finding.
type Finding = result.Finding

// span is a candidate in byte offsets of the analysed text, before
// thresholds, overlap resolution and the conversion to code points.
type span struct {
	start, end int
	typ        Type
	score      float64
	detector   string
}

func (s span) overlaps(o span) bool { return s.start < o.end && o.start < s.end }
func (s span) contains(o span) bool { return s.start <= o.start && o.end <= s.end }
