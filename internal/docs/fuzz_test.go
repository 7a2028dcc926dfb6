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
