package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// resultPrefix is where the gateway stores results over the inline limit
// (awsrt.DefaultResultsPrefix, TOOL_RAG_RESULTS_PREFIX).
const resultPrefix = "results/"

// addResults lets the gateway keep results over the inline limit in the
// bucket under results/ and serve them (resources/read, presigned GET
// signed with its own role), removed a day later (their links expire
// within the hour by default, MCP_GATEWAY_RESULT_TTL).
func addResults(gateway awslambda.Function, bucket awss3.Bucket) {
	gatewayObjects(gateway, bucket, "stored-results", resultPrefix, 1)
}

// gatewayObjects lets the gateway read and write the objects under prefix
// (nothing else of the bucket's) and removes them days after they are
// written, by the lifecycle rule id.
func gatewayObjects(gateway awslambda.Function, bucket awss3.Bucket, id, prefix string, days float64) {
	gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:GetObject", "s3:PutObject"),
		Resources: &[]*string{bucket.ArnForObjects(jsii.String(prefix + "*"))},
	}))
	bucket.AddLifecycleRule(&awss3.LifecycleRule{
		Id: jsii.String(id), Prefix: jsii.String(prefix), Expiration: awscdk.Duration_Days(jsii.Number(days)),
	})
}
