package redact

import (
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// Type is an entity type (see policy.Type).
type Type = policy.Type

// The entity types the detectors find.
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

// Finding is one detected (and redacted) span; see result.Finding.
type Finding = result.Finding
