package jobs

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/publish"
)

// Publisher puts a document's rendered output on the publish target (see
// package publish) from a sandbox of its own: one that never held the
// document, whose only egress is the target's credential route, labelled
// with the document id (doc_sha256, as every job's records) and the file's SHA-256 and the host, so its audit
// records (and the proxy's record of the PUT) say what went where.
type Publisher struct {
	Target   publish.Target
	Template string            // a template carrying airlock-docs
	Metadata map[string]string // the batch's labels
}

// Published is what a line says about its publish.
type Published struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
	// PutMS is the guest's PUT through the egress proxy to the server;
	// TotalMS adds the publish sandbox's create, upload and kill.
	PutMS   int64 `json:"put_ms"`
	TotalMS int64 `json:"total_ms"`
}

// guestPublishFile is where the output waits in the publish sandbox.
const guestPublishFile = guestInDir + "/publish.out"

// publishTimeout bounds the PUT (the guest's own limit; the exec gets a
// margin over it).
const publishTimeout = 2 * time.Minute

// Publish PUTs data as name under the target. The sandbox is killed
// before it returns. A failure is a *LineError with code
// publish.CodeRefused (the host is no credential route of the tenant's:
// nothing left the host), publish.CodeFailed (the PUT failed) or
// CodeSandbox.
func (p *Publisher) Publish(ctx context.Context, sbxs Sandboxes, doc Doc, name string, data []byte) (out Published, lerr *LineError) {
	began := time.Now()
	out = Published{URL: p.Target.URL(name), SHA256: publish.SHA256(data), Bytes: len(data)}
	md := make(map[string]string, len(p.Metadata)+4)
	for k, v := range p.Metadata {
		md[k] = v
	}
	for k, v := range publish.Labels(doc.ID, out.SHA256, p.Target.Host) {
		md[k] = v
	}
	sbx, err := sbxs.Create(ctx, CreateOptions{Template: p.Template, Metadata: md, Routes: []string{p.Target.Host},
		TTL: publishTimeout + toolExecMargin + 2*time.Minute})
	if err != nil {
		if errors.Is(err, errdefs.ErrFailedPrecondition) || errors.Is(err, errdefs.ErrInvalidArgument) {
			out.TotalMS = time.Since(began).Milliseconds()
			return out, lineErr(publish.CodeRefused, "publish to %s refused: %v", p.Target.Host, err)
		}
		return out, lineErr(CodeSandbox, "create a publish sandbox: %s: %v", errdefs.Code(err), err)
	}
	defer func() {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		sbx.Kill(kctx)
		cancel()
		out.TotalMS = time.Since(began).Milliseconds()
	}()
	if err := sbx.Write(ctx, guestPublishFile, strings.NewReader(string(data))); err != nil {
		return out, lineErr(CodeSandbox, "upload the output to publish: %s: %v", errdefs.Code(err), err)
	}
	put := time.Now()
	res, err := sbx.Exec(ctx, []string{ToolPath, "publish", "--url", out.URL, "--file", guestPublishFile,
		"--timeout", publishTimeout.String()}, publishTimeout+toolExecMargin)
	out.PutMS = time.Since(put).Milliseconds()
	switch {
	case err != nil:
		return out, lineErr(CodeSandbox, "run the publish: %s: %v", errdefs.Code(err), err)
	case res.TimedOut:
		return out, lineErr(publish.CodeFailed, "the PUT to %s ran past %s", p.Target.Host, publishTimeout+toolExecMargin)
	case res.ExitCode != 0:
		return out, lineErr(publish.CodeFailed, "%s", lastLine(res.Stderr))
	}
	return out, nil
}
