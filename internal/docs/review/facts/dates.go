package facts

import (
	"regexp"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

var (
	effectiveRE = regexp.MustCompile(`(?i)(?:as of|effective(?: as of| on| from)?|dated(?: as of)?|made on|entered into on|^date:?)\s+(?:the\s+)?(` + datePat + `)`)
	untilRE     = regexp.MustCompile(`(?i)(?:until|through|expire[sd]?\s+on|terminate[sd]?\s+on|ending on|end on)\s+(` + datePat + `)`)
	termForRE   = regexp.MustCompile(`(?i)(?:period|term)\s+of\s+(` + durPat + `)\s*(?:from|after|commencing on|beginning on|following)?`)
	anniversary = regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+anniversary of the Effective Date`)
	// noticeRE is a notice period counted back from the end of the term.
	noticeRE = regexp.MustCompile(`(?i)(?:at least|no later than|not later than|not less than|no less than|minimum of)\s+(` + durPat + `)\s*(?:(?:prior )?written\s+)?(?:notice\s+)?(?:before|prior to|preceding)\s+(?:the\s+)?(?:end|expiration|expiry|expiry date|expiration date|end date)`)
	renewRE  = regexp.MustCompile(`(?i)\brenew`)
	// continuesForRE is "starts on the Effective Date and continues for 24 months".
	continuesForRE = regexp.MustCompile(`(?i)(?:continues?|remains? in (?:force|effect))\s+for\s+(` + durPat + `)`)
	termFromDateRE = regexp.MustCompile(`(?i)(?:period|term)\s+of\s+` + durPat + `\s+(?:from|after|commencing on|beginning on)\s+(` + datePat + `)`)
)

var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}

// keyDates finds the effective date, the expiration date (a date the
// term ends on, or the effective date plus the term), the renewal
// sentence and the notice deadlines counted back from the expiration.
func keyDates(sents []sentence, defs map[string]string) (result.KeyDates, time.Time, time.Time) {
	kd := result.KeyDates{NoticeDeadlines: []result.NoticeDeadline{}}
	var eff, exp time.Time
	if d, ok := defs["Effective Date"]; ok {
		if m := effectiveRE.FindStringSubmatch(d); m != nil {
			eff, _ = parseDate(m[1])
		} else {
			eff, _ = firstDate(d)
		}
	}
	for i := 0; eff.IsZero() && i < len(sents) && i < 10; i++ {
		if m := effectiveRE.FindStringSubmatch(sents[i].text); m != nil {
			eff, _ = parseDate(m[1])
		}
	}
	for _, s := range sents {
		if !exp.IsZero() {
			break
		}
		l := strings.ToLower(s.text)
		if !strings.Contains(l, "term") && !strings.Contains(l, "expire") && !strings.Contains(l, "force") &&
			!strings.Contains(l, "effect") && !strings.Contains(l, "end") && !strings.Contains(l, "continue") {
			continue
		}
		if renewRE.MatchString(s.text) && !strings.Contains(l, "initial") && !strings.Contains(l, "continue") && !strings.Contains(l, "anniversary") {
			continue
		}
		if m := untilRE.FindStringSubmatch(s.text); m != nil {
			exp, _ = parseDate(m[1])
			continue
		}
		from := eff
		if m := termFromDateRE.FindStringSubmatch(s.text); m != nil {
			from, _ = parseDate(m[1]) // "for three years from 2 June 2025"
		} else if !strings.Contains(s.text, "Effective Date") {
			continue
		}
		if from.IsZero() {
			continue
		}
		if m := anniversary.FindStringSubmatch(s.text); m != nil {
			exp = from.AddDate(ordinals[strings.ToLower(m[1])], 0, 0)
		} else if m := firstMatch(s.text, termForRE, continuesForRE); m != nil {
			if d, ok := parseDuration(m[1]); ok && (d.unit == "year" || d.unit == "month") {
				exp = d.add(from, 1)
			}
		}
	}
	for _, s := range sents {
		if kd.Renewal == "" && renewRE.MatchString(s.text) && !strings.Contains(strings.ToLower(s.text), "notice") {
			kd.Renewal = bound(s.text, result.MaxRenewalBytes)
		}
		m := noticeRE.FindStringSubmatch(s.text)
		if m == nil || len(kd.NoticeDeadlines) >= result.MaxNoticeDeadlines {
			continue
		}
		nd := result.NoticeDeadline{Event: "termination", Notice: bound(strings.TrimRight(m[1], "'’"), result.MaxDeadlineBytes),
			Page: s.page, TextSpan: bound(s.text, result.MaxTextSpanBytes)}
		if renewRE.MatchString(s.text) {
			nd.Event = "non-renewal"
		}
		if d, ok := parseDuration(m[1]); ok && !exp.IsZero() {
			nd.Date = ymd(d.add(exp, -1))
		}
		kd.NoticeDeadlines = append(kd.NoticeDeadlines, nd)
	}
	if kd.Renewal == "" {
		for _, s := range sents {
			if renewRE.MatchString(s.text) {
				kd.Renewal = bound(s.text, result.MaxRenewalBytes)
				break
			}
		}
	}
	kd.EffectiveDate, kd.ExpirationDate = ymd(eff), ymd(exp)
	return kd, eff, exp
}

func firstMatch(s string, res ...*regexp.Regexp) []string {
	for _, re := range res {
		if m := re.FindStringSubmatch(s); m != nil {
			return m
		}
	}
	return nil
}
