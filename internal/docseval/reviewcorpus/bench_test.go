package reviewcorpus

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs/review"
)

func benchAnalyze(b *testing.B, contracts int) {
	pb, err := playbook.DefaultPlaybook()
	if err != nil {
		b.Fatal(err)
	}
	cs, err := Generate(Options{Seed: 9, Contracts: contracts})
	if err != nil {
		b.Fatal(err)
	}
	var paras []Paragraph
	for _, c := range cs {
		paras = append(paras, c.Paragraphs...)
	}
	b.ReportMetric(float64(len(paras)), "paragraphs")
	b.ResetTimer()
	for b.Loop() {
		if _, err := review.Analyze(asReview(paras), pb); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeContract is one typical contract (about 50 paragraphs).
func BenchmarkAnalyzeContract(b *testing.B) { benchAnalyze(b, 1) }

// BenchmarkAnalyzeLarge is 40 contracts run together (about 2,000
// paragraphs, 100 pages), the content search's worst case.
func BenchmarkAnalyzeLarge(b *testing.B) { benchAnalyze(b, 40) }

// asReview converts the corpus's paragraphs to the analyser's input.
func asReview(ps []Paragraph) []review.Paragraph {
	out := make([]review.Paragraph, len(ps))
	for i, p := range ps {
		out[i] = review.Paragraph{Text: p.Text, Pages: p.Pages}
	}
	return out
}
