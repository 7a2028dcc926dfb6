package hidden

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadPGM(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		wantErr string
		wantW   int
	}{
		{"plain", "P5\n3 2\n255\n" + "\x00\x01\x02\x03\x04\x05", 100, "", 3},
		{"comment in header", "P5\n# gs\n3 2\n255\n" + "\x00\x01\x02\x03\x04\x05", 100, "", 3},
		{"over pixel limit", "P5\n3000 3000\n255\n", 1000, "pixel limit", 0},
		{"ascii pgm refused", "P2\n3 2\n255\n0 1 2 3 4 5", 100, "magic", 0},
		{"16-bit refused", "P5\n3 2\n65535\n", 100, "maxval", 0},
		{"truncated raster", "P5\n3 2\n255\n\x00\x01", 100, "pixels", 0},
		{"negative size", "P5\n-3 2\n255\n", 100, "bad number", 0},
		{"endless token", "P5" + strings.Repeat("9", 100), 100, "too long", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := ReadPGM(bytes.NewReader([]byte(tt.in)), tt.max)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds().Dx() != tt.wantW || img.GrayAt(2, 1).Y != 5 {
				t.Fatalf("decoded %v, pixel(2,1)=%d", img.Bounds(), img.GrayAt(2, 1).Y)
			}
		})
	}
}
