// Command controller runs cert-manager's certificate, issuer and certificate-request
// controllers as one host process against a kubeconfig: the part of cert-manager's own
// controller binary a self-signed and CA issuer chain needs. Built by brupop's control-plane
// scripts from the cert-manager module on the Go proxy (its cmd modules are not published).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each import registers its controllers or issuer kind in cert-manager's registries.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

const workers = 2

func main() {
	// A flag set of our own: a dependency registers --kubeconfig on the global one.
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the cluster")
	clusterNamespace := flags.String("cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets a ClusterIssuer refers to")
	_ = flags.Parse(os.Args[1:])
	logf.InitLogs()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *clusterNamespace); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager controller:", err)
		os.Exit(1)
	}
}

// run builds one context for every registered controller, starts them and the shared
// informers, and returns when ctx ends or a controller fails.
func run(ctx context.Context, kubeconfig, clusterNamespace string) error {
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterNamespace},
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return err
	}
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	group, ctx := errgroup.WithContext(ctx)
	for name, construct := range controller.Known() {
		each, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		group.Go(func() error { return each.Run(workers, ctx) })
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager controller: %d controllers started\n", len(controller.Known()))
	return group.Wait()
}
