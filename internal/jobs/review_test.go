package jobs

import (
	"path/filepath"
	"testing"
)

// A review report is named by the contract, so a person finds it in the
// directory; the id keeps two contracts of the same name apart.
func TestReportName(t *testing.T) {
	tests := []struct{ path, id, want string }{
		{"/in/ACME Services Agreement (v2).pdf", "0123456789abcdef", "ACME-Services-Agreement-v2-01234567.html"},
		{"/in/a/msa.pdf", "aaaaaaaabbbbbbbb", "msa-aaaaaaaa.html"},
		{"/in/b/msa.pdf", "ccccccccdddddddd", "msa-cccccccc.html"},
		{"/in/../../etc/passwd.pdf", "0123456789abcdef", "passwd-01234567.html"},
		{"/in/Vertrag_Müller.pdf", "0123456789abcdef", "Vertrag_M-ller-01234567.html"},
		{"/in/契約.pdf", "0123456789abcdef", "contract-01234567.html"},
		{"/in/..pdf", "0123456789abcdef", "contract-01234567.html"},
	}
	for _, tt := range tests {
		got := ReportName(Doc{Path: tt.path, ID: tt.id})
		if got != tt.want || filepath.Base(got) != got {
			t.Errorf("ReportName(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// A batch refused before any document was tried writes no index.
func TestWriteIndexNothingTried(t *testing.T) {
	r := &Review{ReportDir: t.TempDir()}
	p, err := r.WriteIndex("Contract review")
	if err != nil || p != "" {
		t.Fatalf("WriteIndex = %q, %v; want no index", p, err)
	}
}
