package invoicecheck

import (
	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/invoice/schema"
)

// DecodeEnvelope decodes the guest's whole result file strictly (the
// shared envelope rules of docs.DecodeEnvelope, then the invoice result).
// It returns the invoice result when the job ran (ok), or the guest's
// error code when it did not; a malformed envelope is ErrRejected.
func DecodeEnvelope(raw []byte) (res *schema.Result, guestCode string, err error) {
	if err := checkShape(raw, maxDepth+1); err != nil {
		return nil, "", reject("envelope: %v", err)
	}
	env, err := docs.DecodeEnvelope(raw, schema.Job, schema.MaxResultBytes+4096)
	if err != nil {
		return nil, "", reject("%v", err)
	}
	if env.Error != nil {
		return nil, env.Error.Code, nil
	}
	res, err = DecodeResult(env.Result)
	if err != nil {
		return nil, "", err
	}
	return res, "", nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
