package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// dropRoleDependsOn removes, from every Lambda function of the stack
// (ours and the CDK's own, such as the AwsCustomResource provider), the
// DependsOn entry on its execution role that the CDK adds: the function's
// Role property (Fn::GetAtt) already orders it after the role (cfn-lint
// W3005). The dependency on the role's default policy stays: nothing else
// makes CloudFormation attach the policy before the function is created.
func dropRoleDependsOn(stack awscdk.Stack) {
	for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		fn, ok := c.(awslambda.Function)
		if !ok {
			continue
		}
		res, ok := fn.Node().DefaultChild().(awslambda.CfnFunction)
		if !ok {
			continue
		}
		role, ok := fn.Role().(awsiam.Role)
		if !ok || role.Node().Scope() == nil {
			continue
		}
		var keep []*string
		if p := role.Node().TryFindChild(jsii.String("DefaultPolicy")); p != nil {
			if el, ok := p.Node().DefaultChild().(awscdk.CfnElement); ok {
				keep = append(keep, stack.GetLogicalId(el))
			}
		}
		if len(keep) == 0 {
			res.AddDeletionOverride(jsii.String("DependsOn"))
		} else {
			res.AddOverride(jsii.String("DependsOn"), keep)
		}
	}
}
