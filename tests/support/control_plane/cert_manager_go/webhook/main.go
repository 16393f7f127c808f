// Command webhook runs cert-manager's admission webhook (validation, defaulting) as a host
// process on loopback, serving a certificate from files, for kube-apiserver to call.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	config "github.com/cert-manager/cert-manager/internal/apis/config/webhook"
	"github.com/cert-manager/cert-manager/internal/webhook"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/webhook/options"
)

func main() {
	// A flag set of our own: a dependency registers --kubeconfig on the global one.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the cluster")
	port := flags.Int("secure-port", 0, "HTTPS port on 127.0.0.1")
	healthz := flags.Int("healthz-port", 0, "plain HTTP port for /healthz and /livez")
	cert := flags.String("tls-cert-file", "", "serving certificate (PEM)")
	key := flags.String("tls-private-key-file", "", "serving key (PEM)")
	_ = flags.Parse(os.Args[1:])
	logf.InitLogs()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	settings, err := options.NewWebhookConfiguration()
	if err == nil {
		settings.KubeConfig = *kubeconfig
		settings.SecurePort = int32(*port)
		settings.HealthzPort = int32(*healthz)
		settings.MetricsListenAddress = "0"
		settings.TLSConfig.Filesystem.CertFile = *cert
		settings.TLSConfig.Filesystem.KeyFile = *key
		err = serve(ctx, settings)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager webhook:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, settings *config.WebhookConfiguration) error {
	server, err := webhook.NewCertManagerWebhookServer(logf.FromContext(ctx, "webhook"), *settings)
	if err != nil {
		return err
	}
	return server.Run(ctx)
}
