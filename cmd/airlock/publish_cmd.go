package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/templatepub"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// blobTokenEnv names the environment variable holding a blob store's PUT
// token (instead of --token-file).
const blobTokenEnv = "AIRLOCK_BLOBS_TOKEN"

// readToken is the trimmed content of file, or $blobTokenEnv for "".
func readToken(file string) (string, error) {
	if file == "" {
		return os.Getenv(blobTokenEnv), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func newTemplatePublishCmd(g *globalFlags) *cobra.Command {
	hf := &hostFlags{g: g}
	var blobURL, tokenFile, dsn string
	cmd := &cobra.Command{
		Use:   "publish NAME --blobs URL --dsn DSN",
		Short: "Publish a baked template to a cluster: upload its blobs, then make it the current build",
		Long: `Publish the current bake of template NAME to a cluster: upload its memory
file, device state and root image to the blob store at --blobs (file:///DIR or
http(s)://HOST[/PREFIX]; a blob already there is not sent again), then, in one
transaction, record the build in the cluster database, make it the template's
current build and notify the API tier. Nodes of the build's host class then
pull it; sandboxes of NAME are placed only on nodes that hold it ready.

An HTTP store's PUTs carry the token in --token-file (or $AIRLOCK_BLOBS_TOKEN).
Prints the build id, its host class, the bytes uploaded and the seconds taken.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if blobURL == "" {
				return errdefs.InvalidArgument("--blobs is required")
			}
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			bs, err := blobs.Open(blobURL, token)
			if err != nil {
				return err
			}
			reg, err := hf.registry()
			if err != nil {
				return err
			}
			st, err := clusterStore(ctx, dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			p, err := templatepub.Publish(ctx, reg, args[0], bs, st)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\tbuild %s\thost class %s\t%d bytes uploaded of %d\t%.2f s\n",
				p.Build.Name, p.Build.BuildID, p.Build.HostClass, p.Uploaded, p.Build.SizeBytes, p.Took.Seconds())
			return nil
		},
	}
	hf.register(cmd)
	cmd.Flags().StringVar(&blobURL, "blobs", "", "blob store: file:///DIR or http(s)://HOST[/PREFIX]")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the blob store's PUT token (default $"+blobTokenEnv+")")
	cmd.Flags().StringVar(&dsn, "dsn", "", "cluster database (default $"+clusterDSNEnv+")")
	return cmd
}

func newBlobsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "blobs", Short: "Serve a template blob store"}
	cmd.AddCommand(newBlobsServeCmd())
	return cmd
}

func newBlobsServeCmd() *cobra.Command {
	var dir, listen, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve --dir DIR --listen ADDR [--token-file F]",
		Short: "Serve DIR as a blob store over HTTP (GET/HEAD to anyone, PUT with the token)",
		Long: `Serve the blob store in DIR over plain HTTP: GET and HEAD of /sha256/<hex>
to anyone (whoever reads a blob checks it against the digest the cluster
database holds), PUT only with "Authorization: Bearer TOKEN", the token in
--token-file (or $AIRLOCK_BLOBS_TOKEN); without a token every PUT is refused.
A PUT whose body does not hash to its name is refused; one of a blob already
present is answered at once. Put TLS in front of it for https://.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" || listen == "" {
				return errdefs.InvalidArgument("--dir and --listen are required")
			}
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			d, err := blobs.NewDir(dir)
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			srv := &http.Server{Handler: blobs.Handler(d, token), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}()
			slog.Info("blob store", "dir", dir, "listen", l.Addr().String(), "puts", token != "")
			fmt.Fprintf(cmd.OutOrStdout(), "listening on %s\n", l.Addr())
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory holding the blobs (sha256/<hex>)")
	cmd.Flags().StringVar(&listen, "listen", "", "TCP address to listen on, e.g. 10.0.0.2:7480")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the PUT token (default $"+blobTokenEnv+")")
	return cmd
}
