// Command infra is the AWS CDK app that deploys the toolrag MCP gateway:
// an HTTP API in front of the gateway function, the sync and health
// functions with their schedules, the DynamoDB tables, the index bucket,
// and one Fargate service per docker or stdio upstream server.
//
//	cd infra && cdk synth            # or: make synth
//	cd infra && cdk deploy           # or: make deploy
//
// Configuration: config.json (else config.example.json) next to this file,
// or -c config=<file>; see docs/deploy.md.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	if _, err := run(app); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		jsii.Close()
		os.Exit(1)
	}
	app.Synth(nil)
}

func run(app awscdk.App) (*Deployment, error) {
	ctx := func(key string) (string, bool) {
		v := app.Node().TryGetContext(jsii.String(key))
		if v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	}
	path := "config.json"
	if v, ok := ctx("config"); ok {
		path = v
	} else if _, err := os.Stat(path); err != nil {
		path = "config.example.json"
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if err := cfg.applyContext(ctx); err != nil {
		return nil, err
	}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	servers, err := LoadServers(cfg.ServersFile)
	if err != nil {
		return nil, err
	}
	account, region := cfg.Account, cfg.Region
	if account == "" {
		account = os.Getenv("CDK_DEFAULT_ACCOUNT")
	}
	if region == "" {
		region = os.Getenv("CDK_DEFAULT_REGION")
	}
	props := &StackProps{Config: cfg, Servers: servers}
	if account != "" || region != "" {
		props.Env = &awscdk.Environment{Account: strOrNil(account), Region: strOrNil(region)}
	}
	return NewGatewayStack(app, "ToolRag-"+cfg.Stage, props)
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
