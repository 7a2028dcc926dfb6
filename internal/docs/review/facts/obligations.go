package facts

import (
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

var (
	modalRE = regexp.MustCompile(`\s+(shall|must|will|agrees to|undertakes to|is required to|covenants to)\s+(not\s+)?([a-z]+)`)
	// deadlineRE is the "by when" of an obligation.
	deadlineRE      = regexp.MustCompile(`(?i)\b(?:(?:within|no later than|not later than|not less than|at least)\s+(` + durPat + `)(?:\s+(after|of|following|from|before|prior to)\s+([^,;.]+?))?(?:\s*(?:[,;.]|$)|\s+(?:and|or|for|under|in respect of|in accordance with)\s)|(?:on or before|no later than|not later than|by)\s+(` + datePat + `))`)
	genericSubjects = []string{"each party", "either party", "both parties", "the parties", "neither party",
		"each Party", "either Party", "both Parties", "the Parties", "neither Party", "Each party", "Either party",
		"Both parties", "The parties", "Each Party", "Either Party", "Both Parties", "The Parties"}
)

// notObligations are verbs after the modal that state a fact, not a duty.
var notObligations = map[string]bool{"be": true, "have": true, "mean": true, "include": true, "apply": true,
	"survive": true, "prevail": true, "remain": true, "continue": true, "commence": true, "expire": true,
	"renew": true, "govern": true, "constitute": true, "become": true, "terminate": true}

// extractObligations finds sentences where a party (a party's name,
// role, short name or "each party") is the subject of a modal verb of
// duty, with the deadline and its resolved date.
func extractObligations(sents []sentence, subjects []string, triggers map[string]time.Time) []result.Obligation {
	subjects = append(append([]string(nil), subjects...), genericSubjects...)
	sort.Slice(subjects, func(i, j int) bool { return len(subjects[i]) > len(subjects[j]) })
	var out []result.Obligation
	for _, s := range sents {
		locs := modalRE.FindAllStringSubmatchIndex(s.text, -1)
		prevParty := ""
		for k, m := range locs {
			verb := s.text[m[6]:m[7]]
			neg := m[4] >= 0
			if notObligations[verb] && !(verb == "be" && strings.HasPrefix(s.text[m[6]:], "be responsible")) {
				continue
			}
			if neg && strings.HasPrefix(strings.ToLower(s.text[:m[0]]), "neither") {
				neg = false
			}
			party := subjectBefore(s.text[:m[0]], subjects)
			if party == "" && prevParty != "" && k > 0 && strings.HasSuffix(strings.TrimSpace(s.text[:m[0]]), " and") {
				party = prevParty // "Provider shall X and shall Y"
			}
			if party == "" {
				continue
			}
			prevParty = party
			end := len(s.text)
			if k+1 < len(locs) {
				end = clauseEnd(s.text, m[1], locs[k+1][0])
			}
			from := m[6]
			if m[4] >= 0 {
				from = m[4]
			}
			span := s.text[from:end]
			o := result.Obligation{Party: bound(party, result.MaxPartyFieldBytes), Page: s.page,
				TextSpan: bound(s.text, result.MaxTextSpanBytes)}
			action := span
			if d := deadlineRE.FindStringSubmatchIndex(span); d != nil {
				end := max(d[3], d[7], d[9]) // the last group that matched, not the word after it
				o.Deadline = bound(strings.TrimSpace(span[d[0]:end]), result.MaxDeadlineBytes)
				o.DueDate = resolve(span, d, triggers)
				action = span[:d[0]] + " " + span[end:]
			}
			action = quotedParenRE.ReplaceAllString(action, "")
			action = strings.Trim(strings.Join(strings.Fields(action), " "), " ,;.:")
			if action == "" || len(out) >= result.MaxObligations {
				continue
			}
			o.Action = bound(action, result.MaxActionBytes)
			out = append(out, o)
		}
	}
	return out
}

// subjectBefore is the party named right before the modal verb.
func subjectBefore(pre string, subjects []string) string {
	pre = strings.TrimRight(pre, " ")
	for _, sub := range subjects {
		if !strings.HasSuffix(pre, sub) {
			continue
		}
		i := len(pre) - len(sub)
		if i > 0 && (isLetter(pre[i-1])) {
			continue
		}
		if strings.HasPrefix(sub, "neither") || strings.HasPrefix(sub, "Neither") {
			return sub
		}
		return sub
	}
	return ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// clauseEnd cuts a sentence with two obligations before the second
// one's subject: at the last ", and" / "; " / " and " before it.
func clauseEnd(s string, from, next int) int {
	seg := s[from:next]
	if strings.HasSuffix(strings.TrimSpace(seg), " and") {
		return from + strings.LastIndex(seg, " and")
	}
	for _, sep := range []string{"; and ", ", and ", "; ", " and "} {
		if i := strings.LastIndex(seg, sep); i >= 0 {
			return from + i
		}
	}
	return next
}

// resolve gives the due date of a deadline: an absolute date, or a
// duration counted from a trigger whose date the contract settles.
func resolve(span string, d []int, triggers map[string]time.Time) string {
	if d[8] >= 0 {
		if t, ok := parseDate(span[d[8]:d[9]]); ok {
			return ymd(t)
		}
		return ""
	}
	if d[2] < 0 || d[6] < 0 {
		return ""
	}
	dur, ok := parseDuration(span[d[2]:d[3]])
	if !ok {
		return ""
	}
	trigger := span[d[6]:d[7]]
	if t, ok := parseDate(strings.TrimSpace(trigger)); ok {
		return ymd(dur.add(t, sign(span[d[4]:d[5]])))
	}
	for name, t := range triggers {
		if strings.Contains(trigger, name) {
			return ymd(dur.add(t, sign(span[d[4]:d[5]])))
		}
	}
	return ""
}

func sign(dir string) int {
	if dir == "before" || dir == "prior to" {
		return -1
	}
	return 1
}
