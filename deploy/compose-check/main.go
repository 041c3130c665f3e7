// compose-check loads a compose file with compose-go, the loader `docker compose` itself uses
// (interpolation, .env files, profiles, extends, schema validation, merge), and prints the
// resolved project as JSON, or the loader's error and exit status 1. No Docker engine is needed:
// this is how the deployment's docker-compose.yml is validated on machines without one
// (tests/unit/test_deployment.py).
//
//	compose-check [--env-file F]... [--profile P]... docker-compose.yml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var envFiles, profiles list
	flag.Var(&envFiles, "env-file", "an environment file (repeatable; later ones win)")
	flag.Var(&profiles, "profile", "a profile to enable (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: compose-check [--env-file F]... [--profile P]... docker-compose.yml")
		os.Exit(2)
	}
	opts, err := cli.NewProjectOptions([]string{flag.Arg(0)},
		cli.WithEnvFiles(envFiles...),
		cli.WithDotEnv,
		cli.WithOsEnv,
		cli.WithProfiles(profiles),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := project.MarshalJSON()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
	fmt.Println()
}
