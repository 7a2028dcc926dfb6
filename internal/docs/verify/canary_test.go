package verify

import (
	"reflect"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/verify/result"
)

func TestFindCanaries(t *testing.T) {
	canaries := []string{"Zebulon Quartermaine", "4111 1111 1111 1111", "CANARY-7731", "x9q", "José Ñúñez"}
	for _, tc := range []struct {
		name, text string
		want       []int
	}{
		{"absent", "Dear <PERSON>, your card <CREDIT_CARD> is on file.", nil},
		{"as written", "Zebulon Quartermaine signed.", []int{0}},
		{"case and spacing", "ZEBULON  quarter-maine", []int{0}},
		{"decomposed accents do not hide it", "Jose\u0301 N\u0303u\u0301n\u0303ez", []int{4}},
		{"dropped accents do not hide it", "JOSE NUNEZ", []int{4}},
		{"digits reformatted", "card 4111-1111-1111-1111 on file", []int{1}},
		{"digits run together", "ref 4111111111111111", []int{1}},
		{"digits split by text", "4111 1111 then 1111 1111", []int{1}},
		{"token without punctuation", "canary7731", []int{2}},
		{"partial digits are not a hit", "4111 1111 1111", nil},
		{"too short to count", "x9q x9q", nil},
	} {
		if got := FindCanaries(tc.text, canaries); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: FindCanaries = %v, want %v", tc.name, got, tc.want)
		}
	}
	if err := result.CheckCanaries([]string{"ok-1234", "a b"}); err == nil {
		t.Error("CheckCanaries accepted a canary of two letters")
	}
}

func TestWithCanariesMakesSuspicious(t *testing.T) {
	r := WithCanaries(&result.Report{Version: result.Version, Verdict: result.Clean, Findings: []result.Finding{}}, []int{2})
	if r.Verdict != result.Suspicious || len(r.Reasons) != 1 || r.Validate() != nil {
		t.Fatalf("report after a canary hit: %+v (validate %v)", r, r.Validate())
	}
	clean := &result.Report{Version: result.Version, Verdict: result.Clean, Canaries: []int{0}}
	if clean.Validate() == nil {
		t.Error("a clean report with a canary hit validated")
	}
}
