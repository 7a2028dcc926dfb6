package docs

import "testing"

// FuzzDecodeEnvelope: whatever a guest writes as its result envelope is
// decoded strictly or refused, and a decoded one is internally consistent.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"version":1,"job":"review","ok":true,"result":{},"timings_ms":{}}`))
	f.Add([]byte(`{"version":1,"job":"review","ok":false,"error":{"code":"encrypted","message":"m"}}`))
	f.Add([]byte(`{"version":1,"job":"review","ok":true,"error":{"code":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := DecodeEnvelope(b, "review", 1<<16)
		if err != nil {
			return
		}
		if env.OK == (env.Error != nil) {
			t.Fatalf("decoded an envelope with ok=%v and error %+v", env.OK, env.Error)
		}
	})
}

// The host refuses risk names it does not know, repeated or unsorted.
func TestDecodeEnvelopeRisks(t *testing.T) {
	env := func(risks string) []byte {
		return []byte(`{"version":1,"job":"review","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"risks":` + risks + `,"result":null}`)
	}
	if e, err := DecodeEnvelope(env(`["pdf_embedded_files","pdf_javascript"]`), "review", 0); err != nil || len(e.Risks) != 2 {
		t.Fatalf("known risks: %v %v", e, err)
	}
	for _, bad := range []string{`["pdf_launch"]`, `["pdf_javascript","pdf_javascript"]`, `["pdf_javascript","pdf_embedded_files"]`} {
		if _, err := DecodeEnvelope(env(bad), "review", 0); err == nil {
			t.Errorf("risks %s accepted", bad)
		}
	}
}
