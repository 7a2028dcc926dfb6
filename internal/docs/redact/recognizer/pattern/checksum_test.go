package pattern

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestABAIsTheSharedChecksum: the routing validator (the Federal Reserve
// prefix, then internal/checksum) accepts exactly the numbers with such
// a prefix whose 3-7-1 weighted sum is a multiple of ten.
func TestABAIsTheSharedChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for range 20000 {
		d := strconv.Itoa(100000000 + r.IntN(900000000))
		if len(d) != 9 {
			continue
		}
		got := len(validateABA(nil, d)) > 0
		p, _ := strconv.Atoi(d[:2])
		prefix := p <= 12 || p >= 21 && p <= 32 || p >= 61 && p <= 72 || p == 80
		sum := 0
		for i, w := range []int{3, 7, 1, 3, 7, 1, 3, 7, 1} {
			sum += w * int(d[i]-'0')
		}
		if want := prefix && sum%10 == 0; got != want {
			t.Fatalf("%s: validator %v, want %v", d, got, want)
		}
		valid += b2i(got)
	}
	if valid == 0 {
		t.Fatal("no valid routing number drawn")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
