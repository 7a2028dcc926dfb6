package result

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The facts of a contract the review extracts besides the findings:
// parties, key dates, defined terms and obligations. Like every other
// field, each may have been written by a compromised guest, so the host
// bounds and checks them in Validate.

// Problems a defined term may carry: the closed set the host accepts.
const (
	ProblemUndefined     = "undefined"     // used as a defined term, defined nowhere
	ProblemUnused        = "unused"        // defined, never used afterwards
	ProblemDefinedTwice  = "defined_twice" // defined more than once, differently
	MaxParties           = 20
	MaxDefinedTerms      = 300
	MaxObligations       = 300
	MaxNoticeDeadlines   = 50
	MaxUses              = 500 // pages listed in one term's uses
	MaxPartyFieldBytes   = 500
	MaxTermBytes         = 200
	MaxDefinitionBytes   = 2000
	MaxActionBytes       = 1000
	MaxDeadlineBytes     = 300
	MaxTextSpanBytes     = 2000
	MaxRenewalBytes      = 1000
	MaxNoticeEventBytes  = 200
	dateLayout           = "2006-01-02"
	problemsPerTermLimit = 3
)

// Party is one party to the contract.
type Party struct {
	Name      string `json:"name"`       // the full legal name as written
	Role      string `json:"role"`       // the capacity the contract gives it, e.g. "Customer"; "" if none
	ShortName string `json:"short_name"` // the name it is given in the contract, e.g. "Acme"; "" if none
	Address   string `json:"address"`    // as written; "" if none
	Signatory string `json:"signatory"`  // the person signing for it; "" if none
}

// KeyDates are the contract's dates, each YYYY-MM-DD or "" when the
// contract does not settle it.
type KeyDates struct {
	EffectiveDate   string           `json:"effective_date"`
	ExpirationDate  string           `json:"expiration_date"`
	Renewal         string           `json:"renewal"` // the renewal sentence, bounded; "" if none
	NoticeDeadlines []NoticeDeadline `json:"notice_deadlines"`
}

// NoticeDeadline is the last day a notice may be given to have an effect,
// e.g. notice of non-renewal 60 days before the expiration date.
type NoticeDeadline struct {
	Event    string `json:"event"`  // what the notice does, e.g. "non-renewal", "termination"
	Notice   string `json:"notice"` // the notice period as written, e.g. "sixty (60) days"
	Date     string `json:"date"`   // YYYY-MM-DD when resolvable, else ""
	Page     int    `json:"page"`   // 0 if unknown
	TextSpan string `json:"text_span"`
}

// DefinedTerm is one defined term (or a term used as if defined).
type DefinedTerm struct {
	Term       string   `json:"term"`
	Definition string   `json:"definition"` // the defining sentence; "" when undefined
	Page       int      `json:"page"`       // of the definition; 0 when undefined or unknown
	Uses       []int    `json:"uses"`       // the page of every use after the definition, ascending
	Problems   []string `json:"problems"`   // ProblemUndefined, ProblemUnused, ProblemDefinedTwice
}

// Obligation is one thing a party must do.
type Obligation struct {
	Party    string `json:"party"`    // who must act, as the contract names it ("Customer", "each party")
	Action   string `json:"action"`   // what, from the modal verb on
	Deadline string `json:"deadline"` // by when, as written; "" if none
	DueDate  string `json:"due_date"` // YYYY-MM-DD when the deadline resolves, else ""
	Page     int    `json:"page"`
	TextSpan string `json:"text_span"` // the sentence
}

// validateFacts checks the facts fields of a Result.
func (r *Result) validateFacts() error {
	if len(r.Parties) > MaxParties {
		return fmt.Errorf("parties: %d entries, limit %d", len(r.Parties), MaxParties)
	}
	for i, p := range r.Parties {
		for _, c := range []struct{ field, v string }{
			{"name", p.Name}, {"role", p.Role}, {"short_name", p.ShortName}, {"address", p.Address}, {"signatory", p.Signatory},
		} {
			if err := checkString(fmt.Sprintf("parties[%d].%s", i, c.field), c.v, MaxPartyFieldBytes); err != nil {
				return err
			}
		}
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("parties[%d]: empty name", i)
		}
	}
	if err := r.KeyDates.validate(); err != nil {
		return err
	}
	if len(r.DefinedTerms) > MaxDefinedTerms {
		return fmt.Errorf("defined_terms: %d entries, limit %d", len(r.DefinedTerms), MaxDefinedTerms)
	}
	for i := range r.DefinedTerms {
		if err := r.DefinedTerms[i].validate(); err != nil {
			return fmt.Errorf("defined_terms[%d]: %w", i, err)
		}
	}
	if len(r.Obligations) > MaxObligations {
		return fmt.Errorf("obligations: %d entries, limit %d", len(r.Obligations), MaxObligations)
	}
	for i := range r.Obligations {
		if err := r.Obligations[i].validate(); err != nil {
			return fmt.Errorf("obligations[%d]: %w", i, err)
		}
	}
	return nil
}

func (k *KeyDates) validate() error {
	if err := checkDate("key_dates.effective_date", k.EffectiveDate); err != nil {
		return err
	}
	if err := checkDate("key_dates.expiration_date", k.ExpirationDate); err != nil {
		return err
	}
	if err := checkString("key_dates.renewal", k.Renewal, MaxRenewalBytes); err != nil {
		return err
	}
	if len(k.NoticeDeadlines) > MaxNoticeDeadlines {
		return fmt.Errorf("key_dates.notice_deadlines: %d entries, limit %d", len(k.NoticeDeadlines), MaxNoticeDeadlines)
	}
	for i, n := range k.NoticeDeadlines {
		f := fmt.Sprintf("key_dates.notice_deadlines[%d]", i)
		if err := checkString(f+".event", n.Event, MaxNoticeEventBytes); err != nil {
			return err
		}
		if err := checkString(f+".notice", n.Notice, MaxDeadlineBytes); err != nil {
			return err
		}
		if err := checkDate(f+".date", n.Date); err != nil {
			return err
		}
		if err := checkPage(f+".page", n.Page); err != nil {
			return err
		}
		if err := checkString(f+".text_span", n.TextSpan, MaxTextSpanBytes); err != nil {
			return err
		}
	}
	return nil
}

func (d *DefinedTerm) validate() error {
	if err := checkString("term", d.Term, MaxTermBytes); err != nil {
		return err
	}
	if strings.TrimSpace(d.Term) == "" {
		return errors.New("empty term")
	}
	if err := checkString("definition", d.Definition, MaxDefinitionBytes); err != nil {
		return err
	}
	if err := checkPage("page", d.Page); err != nil {
		return err
	}
	if len(d.Uses) > MaxUses {
		return fmt.Errorf("uses: %d entries, limit %d", len(d.Uses), MaxUses)
	}
	prev := 1
	for _, p := range d.Uses {
		if p < prev || p > MaxPageNumber {
			return fmt.Errorf("uses: %v is not non-decreasing page numbers from 1", truncateInts(d.Uses))
		}
		prev = p
	}
	if len(d.Problems) > problemsPerTermLimit {
		return fmt.Errorf("problems: %d entries, limit %d", len(d.Problems), problemsPerTermLimit)
	}
	seen := map[string]bool{}
	for _, p := range d.Problems {
		if !oneOf(p, ProblemUndefined, ProblemUnused, ProblemDefinedTwice) || seen[p] {
			return fmt.Errorf("problems: %q is not undefined, unused or defined_twice, once", truncate(p, 20))
		}
		seen[p] = true
	}
	if seen[ProblemUndefined] && (d.Definition != "" || seen[ProblemUnused] || seen[ProblemDefinedTwice]) {
		return errors.New("an undefined term with a definition")
	}
	return nil
}

func (o *Obligation) validate() error {
	for _, c := range []struct {
		field, v string
		limit    int
	}{
		{"party", o.Party, MaxPartyFieldBytes},
		{"action", o.Action, MaxActionBytes},
		{"deadline", o.Deadline, MaxDeadlineBytes},
		{"text_span", o.TextSpan, MaxTextSpanBytes},
	} {
		if err := checkString(c.field, c.v, c.limit); err != nil {
			return err
		}
	}
	if strings.TrimSpace(o.Action) == "" {
		return errors.New("empty action")
	}
	if err := checkDate("due_date", o.DueDate); err != nil {
		return err
	}
	return checkPage("page", o.Page)
}

// checkDate accepts "" or a real calendar date as YYYY-MM-DD.
func checkDate(field, v string) error {
	if v == "" {
		return nil
	}
	if _, err := time.Parse(dateLayout, v); err != nil || len(v) != len(dateLayout) {
		return fmt.Errorf("%s: %q is not a YYYY-MM-DD date", field, truncate(v, 20))
	}
	return nil
}

func checkPage(field string, p int) error {
	if p < 0 || p > MaxPageNumber {
		return fmt.Errorf("%s: %d is not a page number", field, p)
	}
	return nil
}
