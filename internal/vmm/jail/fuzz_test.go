package jail

import "testing"

// FuzzDecodeSpec: any argument either fails to decode or decodes into a
// spec that validates and survives a round trip.
func FuzzDecodeSpec(f *testing.F) {
	good, _ := goodSpec().Encode()
	f.Add(good)
	f.Add(`{"id":"x","root":"/","uid":0}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, arg string) {
		s, err := Decode(arg)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid spec: %v", err)
		}
		again, err := s.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}
