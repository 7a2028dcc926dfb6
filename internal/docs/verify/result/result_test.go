package result

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	good := `{"version":1,"verdict":"suspicious","reasons":["1x US_SSN (ssn-structure)"],"findings":[{"type":"US_SSN","start":1,"end":5,"rule":"ssn-structure"}]}`
	if r, err := Decode(strings.NewReader(good)); err != nil || r.Verdict != Suspicious {
		t.Fatalf("%v %+v", err, r)
	}
	for name, s := range map[string]string{
		"unknown field":   `{"version":1,"verdict":"clean","reasons":[],"findings":[],"value":"x"}`,
		"clean with hits": `{"version":1,"verdict":"clean","reasons":[],"findings":[{"type":"X","start":1,"end":2,"rule":"r"}]}`,
		"no reason":       `{"version":1,"verdict":"suspicious","reasons":[],"findings":[]}`,
		"bad verdict":     `{"version":1,"verdict":"fine","reasons":[],"findings":[]}`,
		"bad span":        `{"version":1,"verdict":"suspicious","reasons":["r"],"findings":[{"type":"X","start":3,"end":2,"rule":"r"}]}`,
		"trailing":        `{"version":1,"verdict":"clean","reasons":[],"findings":[]} x`,
		"version":         `{"version":2,"verdict":"clean","reasons":[],"findings":[]}`,
	} {
		if _, err := Decode(strings.NewReader(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
