package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// taskResultPrefix is where the gateway keeps the results of the tasks it
// runs itself (pkg/awsrt taskResults); a task lives 24 hours at most.
const taskResultPrefix = "tasks/"

// stateKeySecret names the secret sealing the gateway's input_required
// requestState (awsrt.StateKeySecret), read under the secrets prefix.
const stateKeySecret = "TOOL_RAG_STATE_KEY"

// addTasks lets the gateway run a long call as its own task
// (docs/upstreams.md, MCP tasks) in an asynchronous invocation of runner
// (itself, or the streamed front door's function, whose timeout is
// Lambda's 15 minutes: TOOL_RAG_GATEWAY_FUNCTION) and keep the result
// under tasks/ in the bucket, removed by a lifecycle rule two days later.
// The invoke grant is a policy of its own: on the role's default policy
// it would make the functions depend on their own ARN.
//
// With secrets in Secrets Manager it also creates the input_required
// state key every instance shares; with SSM the operator puts it
// (a SecureString CloudFormation cannot create; docs/aws-runtime.md).
func addTasks(stack awscdk.Stack, cfg Config, gateway, runner awslambda.Function, bucket awss3.Bucket) {
	awsiam.NewPolicy(stack, jsii.String("GatewaySelfInvoke"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{gateway.Role()},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{runner.FunctionArn()},
		})},
	})
	if runner != gateway {
		gateway.AddEnvironment(jsii.String("TOOL_RAG_GATEWAY_FUNCTION"), runner.FunctionName(), nil)
	}
	gatewayObjects(gateway, bucket, "task-results", taskResultPrefix, 2)
	if cfg.SecretsStore == "secretsmanager" {
		awssecretsmanager.NewSecret(stack, jsii.String("StateKey"), &awssecretsmanager.SecretProps{
			SecretName:  jsii.String(cfg.SecretsPrefix + stateKeySecret),
			Description: jsii.String("toolrag " + cfg.Stage + ": seals the gateway's input_required state (shared by every instance)"),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
			},
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
	}
}
