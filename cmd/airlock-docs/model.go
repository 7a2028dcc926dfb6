package main

import (
	"context"
	"net/http"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/invoice"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
	"github.com/airlock-dev/airlock/internal/docs/llm"
)

// modelConfidence is what a field only the model read is worth: below the
// host's approval minimum (0.6), so such a field is a suggestion a person
// confirms, never a basis for an automatic approval.
const modelConfidence = 0.5

// askModel gets the model's reading of the visible text and merges it
// under the rules extractor's: the rules stay the default; the model
// fills fields they left empty (method "model", low confidence) and marks
// fields it reads differently (model_disagrees). A model that fails or
// answers out of protocol changes nothing: the rules' answer stands.
func askModel(ctx context.Context, c *llm.Client, text string, res *invoice.Result) (used bool) {
	ctx, cancel := context.WithTimeout(ctx, llm.DefaultTimeout)
	defer cancel()
	mf, err := c.ExtractInvoice(ctx, text)
	if err != nil {
		return false
	}
	for _, name := range result.ScalarFields() {
		rv, mv := res.Fields.Ptr(name), mf.Ptr(name)
		switch {
		case *mv == nil:
		case *rv == nil:
			*rv = *mv
			res.FieldSources[name] = result.FieldSource{Method: result.MethodModel, Confidence: modelConfidence, Issues: []string{}}
		case **rv != **mv:
			src := res.FieldSources[name]
			src.Issues = append(src.Issues, result.IssueModelDisagrees)
			src.Confidence = min(src.Confidence, modelConfidence)
			res.FieldSources[name] = src
		}
	}
	if len(res.Fields.LineItems) == 0 && len(mf.LineItems) > 0 {
		res.Fields.LineItems = mf.LineItems
		res.FieldSources[result.FieldLineItems] = result.FieldSource{Method: result.MethodModel, Confidence: modelConfidence, Issues: []string{}}
	}
	return true
}

func newModelClient(url, model string) *llm.Client {
	return &llm.Client{BaseURL: url, Model: model, HTTP: &http.Client{Timeout: llm.DefaultTimeout + 5*time.Second}}
}
