package checksum

import "testing"

func TestIBANMod97(t *testing.T) {
	for s, want := range map[string]bool{
		"GB82WEST12345698765432": true, "DE89370400440532013000": true, "NL91ABNA0417164300": true,
		"GB82WEST12345698765433": false, // one digit off
		"DE89370400440532013001": false, "GB82 WEST": false, "gb82west12345698765432": false, "": false, "GB8": false,
	} {
		if got := IBANMod97(s); got != want {
			t.Errorf("IBANMod97(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestABA(t *testing.T) {
	for s, want := range map[string]bool{
		"011000015": true, "121000358": true, "021000021": true,
		"011000016": false, "000000000": false, "12100035": false, "12100035a": false, "1210003580": false,
	} {
		if got := ABA(s); got != want {
			t.Errorf("ABA(%q) = %v, want %v", s, got, want)
		}
	}
}
