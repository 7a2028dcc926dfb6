package policy

import "github.com/airlock-dev/airlock/internal/docs/redact/result"

// Type is an entity type; its string is the placeholder's name ("<EMAIL>").
type Type string

// The entity types the detectors find; result.Types lists the same names
// (TestTypesMatchTheContract holds them equal).
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
)

// AllTypes lists the entity types in a stable order.
func AllTypes() []Type {
	out := make([]Type, len(result.Types))
	for i, t := range result.Types {
		out[i] = Type(t)
	}
	return out
}

// Known reports whether t is one of the entity types a policy may name.
func Known(t Type) bool {
	for _, k := range result.Types {
		if string(t) == k {
			return true
		}
	}
	return false
}
