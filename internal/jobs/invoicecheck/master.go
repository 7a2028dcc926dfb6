package invoicecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Master is a tenant's vendor master data.
type Master struct {
	TenantID string   `json:"tenant_id"`
	Vendors  []Vendor `json:"vendors"`
	// Warnings are what the master carried that was ignored (fields
	// this package does not know), one line each.
	Warnings []string `json:"-"`
}

// Vendor is one known vendor.
type Vendor struct {
	VendorID         string   `json:"vendor_id"`
	Name             string   `json:"name"`
	Aliases          []string `json:"aliases"`
	TaxID            string   `json:"tax_id"`
	Country          string   `json:"country"`
	Currency         string   `json:"currency"`
	Address          string   `json:"address"`
	Email            string   `json:"email"`
	Bank             Bank     `json:"bank"`
	PaymentTermsDays int      `json:"payment_terms_days"`
}

// Bank is a vendor's known payment details.
type Bank struct {
	IBAN          string `json:"iban"`
	BIC           string `json:"bic"`
	BankName      string `json:"bank_name"`
	AccountNumber string `json:"account_number"`
	RoutingNumber string `json:"routing_number"`
	SortCode      string `json:"sort_code"`
	AccountName   string `json:"account_name"`
}

// MaxMasterBytes bounds a vendor master file.
const MaxMasterBytes = 16 << 20

var (
	tenantRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	countryRe  = regexp.MustCompile(`^[A-Z]{2}$`)
	vendorIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
)

// ParseMaster reads a vendor master (see masterread.go for the shapes it
// accepts): unknown fields are ignored and listed in Master.Warnings;
// duplicate keys, trailing data, wrong types and invalid values (a bad
// IBAN checksum, a routing number failing the ABA check, a duplicate
// vendor id or tax id) are errors that name the place
// ("vendors[2].bank.iban: fails the mod-97 check", or line:column for
// JSON syntax). Bank numbers are stored normalised.
func ParseMaster(r io.Reader) (*Master, error) { return ParseMasterWith(r, MasterOptions{}) }

// ParseMasterWith is ParseMaster with options.
func ParseMasterWith(r io.Reader, o MasterOptions) (*Master, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxMasterBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read vendor master: %w", err)
	}
	if len(raw) > MaxMasterBytes {
		return nil, fmt.Errorf("vendor master: over %d bytes", MaxMasterBytes)
	}
	if err := checkShape(raw, 5); err != nil {
		return nil, fmt.Errorf("vendor master: %s", withPosition(raw, err))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("vendor master: %s", withPosition(raw, err))
	}
	mr := &masterReader{unknown: map[string][]string{}}
	m := mr.master(tree)
	if len(mr.errs) > 0 {
		return nil, fmt.Errorf("vendor master: %s", strings.Join(mr.errs, "; "))
	}
	m.Warnings = mr.warnings()
	if o.Strict && len(m.Warnings) > 0 {
		// Under --strict nothing is ignored: the field is the error.
		msg := strings.ReplaceAll(strings.Join(m.Warnings, "; "), "unknown field, ignored", "unknown field")
		return nil, fmt.Errorf("vendor master (strict): %s", msg)
	}
	ref, err := loadRefData()
	if err != nil {
		return nil, err
	}
	if err := m.validate(ref); err != nil {
		return nil, fmt.Errorf("vendor master %s: %w", m.TenantID, err)
	}
	return m, nil
}

// withPosition adds line:column to JSON errors that carry an offset.
func withPosition(raw []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(raw)) {
		return err.Error()
	}
	line := 1 + bytes.Count(raw[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(raw[:off], '\n')
	return fmt.Sprintf("line %d col %d: %v", line, col, err)
}

func (m *Master) validate(ref *refData) error {
	if !tenantRe.MatchString(m.TenantID) {
		return fmt.Errorf("tenant_id %q: want letters, digits, '_', '.', '-'", truncate(m.TenantID, 40))
	}
	var errs []error
	ids, taxIDs := map[string]int{}, map[string]int{}
	for i := range m.Vendors {
		v := &m.Vendors[i]
		at := fmt.Sprintf("vendors[%d]", i)
		for _, e := range v.validate(ref) {
			errs = append(errs, fmt.Errorf("%s.%w", at, e))
		}
		if j, dup := ids[v.VendorID]; dup {
			errs = append(errs, fmt.Errorf("%s.vendor_id: %q already used by vendors[%d]", at, v.VendorID, j))
		}
		ids[v.VendorID] = i
		if t := normTaxID(v.TaxID); t != "" {
			if j, dup := taxIDs[t]; dup {
				errs = append(errs, fmt.Errorf("%s.tax_id: same as vendors[%d]", at, j))
			}
			taxIDs[t] = i
		}
		if len(errs) >= 10 {
			break
		}
	}
	return errors.Join(errs...)
}

// validate checks one vendor and normalises its numbers.
func (v *Vendor) validate(ref *refData) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if !vendorIDRe.MatchString(v.VendorID) {
		bad("vendor_id", "%q is not an id", truncate(v.VendorID, 40))
	}
	if strings.TrimSpace(v.Name) == "" || textProblem(v.Name, 200) != "" {
		bad("name", "required, at most 200 characters, no control characters")
	}
	for k, a := range v.Aliases {
		if strings.TrimSpace(a) == "" || textProblem(a, 200) != "" {
			bad(fmt.Sprintf("aliases[%d]", k), "empty, too long or with control characters")
		}
	}
	if t := normTaxID(v.TaxID); v.TaxID != "" && !taxIDRe.MatchString(t) {
		bad("tax_id", "not a tax id")
	}
	if v.Country != "" && !countryRe.MatchString(v.Country) {
		bad("country", "want an ISO 3166 alpha-2 code")
	}
	if _, ok := ref.minorUnits[v.Currency]; v.Currency != "" && !ok {
		bad("currency", "%q is not ISO 4217", truncate(v.Currency, 10))
	}
	if v.Email != "" && (!strings.Contains(v.Email, "@") || textProblem(v.Email, 254) != "") {
		bad("email", "not an email address")
	}
	if v.PaymentTermsDays < 0 || v.PaymentTermsDays > 365 {
		bad("payment_terms_days", "want 0..365")
	}
	for _, e := range v.Bank.normalise(ref) {
		errs = append(errs, fmt.Errorf("bank.%w", e))
	}
	return errs
}

func (b *Bank) normalise(ref *refData) []error {
	var errs []error
	if b.IBAN != "" {
		b.IBAN = normIBAN(b.IBAN)
		if why := ref.ibanProblem(b.IBAN); why != "" {
			errs = append(errs, fmt.Errorf("iban: %s", why))
		}
	}
	if b.BIC != "" {
		b.BIC = strings.ToUpper(strings.TrimSpace(b.BIC))
		if why := bicProblem(b.BIC); why != "" {
			errs = append(errs, fmt.Errorf("bic: %s", why))
		}
	}
	if b.AccountNumber != "" {
		b.AccountNumber = digitsOnly(b.AccountNumber)
		if !accountRe.MatchString(b.AccountNumber) {
			errs = append(errs, errors.New("account_number: want 4 to 17 digits"))
		}
	}
	if b.RoutingNumber != "" {
		b.RoutingNumber = digitsOnly(b.RoutingNumber)
		if !abaValid(b.RoutingNumber) {
			errs = append(errs, errors.New("routing_number: fails the ABA checksum"))
		}
	}
	if b.SortCode != "" {
		b.SortCode = digitsOnly(b.SortCode)
		if len(b.SortCode) != 6 {
			errs = append(errs, errors.New("sort_code: want six digits"))
		}
	}
	return errs
}
