// Package invoicecheck is the host side of the invoice job: it turns the
// guest's result JSON, which it treats as an untrusted claim, into a
// decision for one tenant.
//
// It decodes strictly (size limits, duplicate or unknown keys, any
// approval/status/decision field, bad enums: the whole result is refused),
// clamps every value to its schema (a bad amount, date, currency, IBAN
// shape or string is dropped to null with a flag, never passed through),
// matches the vendor against the tenant's vendor master (tax id, then
// normalised name and aliases), checks bank details (IBAN mod-97 and
// length, ABA checksum, BIC shape) against the vendor's known ones, checks
// the arithmetic in exact decimals, the auto-approve limit, due dates,
// duplicates (History) and the guest's confidences, and reports every
// finding as a Flag. The decision is approve only when there is no flag.
//
// The vendor master is the operator's data, not the guest's, and is read
// for what it means (masterread.go): the common shapes of the same data
// are accepted, unknown fields are warnings (MasterOptions.Strict makes
// them errors), and the values the decision rests on are validated.
//
// It imports only the result types (internal/docs/invoice/result), never
// extraction code, and never parses a document (internal/hostimports
// enforces this for every host package). Flag details never carry a
// bank number in full: all but the last four characters are masked.
package invoicecheck
