package invoicecheck

import (
	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// DecodeEnvelope decodes the guest's whole result file strictly (the
// shared envelope rules of docs.DecodeEnvelope, then the invoice result).
// It returns the invoice result and the document's risks (docs.Risk*)
// when the job ran (ok), or the guest's error code when it did not; a
// malformed envelope is ErrRejected.
func DecodeEnvelope(raw []byte) (res *result.Result, risks []string, guestCode string, err error) {
	if err := checkShape(raw, maxDepth+1); err != nil {
		return nil, nil, "", reject("envelope: %v", err)
	}
	env, err := docs.DecodeEnvelope(raw, result.Job, result.MaxResultBytes+4096)
	if err != nil {
		return nil, nil, "", reject("%v", err)
	}
	if env.Error != nil {
		return nil, nil, env.Error.Code, nil
	}
	res, err = DecodeResult(env.Result)
	if err != nil {
		return nil, nil, "", err
	}
	return res, env.Risks, "", nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
