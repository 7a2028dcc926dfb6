package redact

import "github.com/airlock-dev/airlock/internal/docs/redact/result"

// Type is an entity type; its string is the placeholder's name ("<EMAIL>").
type Type string

// The entity types the detectors find.
const (
	Person        Type = "PERSON"
	Email         Type = "EMAIL"
	Phone         Type = "PHONE"
	SSN           Type = "US_SSN"
	CreditCard    Type = "CREDIT_CARD"
	IBAN          Type = "IBAN"
	IPAddress     Type = "IP_ADDRESS"
	DateOfBirth   Type = "DATE_OF_BIRTH"
	StreetAddress Type = "STREET_ADDRESS"
	BankAccount   Type = "US_BANK_ACCOUNT"
	BankRouting   Type = "US_BANK_ROUTING"
	Passport      Type = "US_PASSPORT"
	DriverLicense Type = "US_DRIVER_LICENSE"
	negativeLabel Type = "negative"        // context.yaml's "negative" list, never a finding
	personLabel   Type = "person_label"    // "Name:", any name-ish words follow
	personRole    Type = "person_role"     // "Patient:", list-backed names follow
	personOpener  Type = "person_opener"   // "Dear", capitalised names follow
	personCue     Type = "person_cue"      // "please contact", "case officer": name-shaped words follow
	nonPerson     Type = "non_person_name" // "Company Name:", nothing follows
)

// AllTypes lists the entity types in a stable order.
func AllTypes() []Type {
	out := make([]Type, len(result.Types))
	for i, t := range result.Types {
		out[i] = Type(t)
	}
	return out
}

func knownType(t Type) bool {
	for _, k := range result.Types {
		if string(t) == k {
			return true
		}
	}
	return false
}

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
