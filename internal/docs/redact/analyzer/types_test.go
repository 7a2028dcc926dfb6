package analyzer

import "github.com/airlock-dev/airlock/internal/docs/redact/policy"

// Names the detection tests' case tables use.
type Type = policy.Type

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
