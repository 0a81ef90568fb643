package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// addVault gives the gateway the token vault of per-principal upstream
// identity (docs/upstream-auth.md): the vault table (read and write) and
// a KMS key with rotation (TOOL_RAG_VAULT_KMS_KEY) for envelope
// encryption, of which the gateway may only generate data keys and decrypt
// them, and only under its own encryption contexts (purpose toolrag-*;
// each grant's also names its principal and server). The key outlives
// the stack: deleting it would make every stored grant unreadable.
func addVault(stack awscdk.Stack, cfg Config, gateway awslambda.Function, setEnv func(key string, value *string), table awsdynamodb.Table) awskms.Key {
	key := awskms.NewKey(stack, jsii.String("VaultKey"), &awskms.KeyProps{
		Description:       jsii.String("toolrag " + cfg.Stage + ": token vault (per-principal upstream grants)"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	setEnv("TOOL_RAG_VAULT_KMS_KEY", key.KeyArn())
	table.GrantReadWriteData(gateway)
	gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("kms:GenerateDataKey", "kms:Decrypt"),
		Resources:  &[]*string{key.KeyArn()},
		Conditions: &map[string]interface{}{"StringLike": map[string]interface{}{"kms:EncryptionContext:purpose": "toolrag-*"}},
	}))
	awscdk.NewCfnOutput(stack, jsii.String("VaultKeyArn"), &awscdk.CfnOutputProps{
		Value: key.KeyArn(), Description: jsii.String("KMS key sealing the per-principal upstream grants"),
	})
	return key
}
