package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"
)

// frontDoor is what the internet reaches: the HTTP API (default) or a
// REST API behind AWS WAF (frontDoor "rest-waf").
type frontDoor struct {
	httpAPI awsapigatewayv2.HttpApi // one of the two is set
	restAPI awsapigateway.RestApi
	url     *string // base URL, ending in /
	// metric returns one of the front door's API Gateway metrics (5-minute
	// period) by its name in that API's flavour.
	metric                     func(name, stat string) awscloudwatch.IMetric
	serverErrors, clientErrors string // "5xx"/"4xx" (HTTP API), "5XXError"/"4XXError" (REST API)
}

func addFrontDoor(stack awscdk.Stack, cfg Config, gateway awslambda.Function, logRetention awslogs.RetentionDays) *frontDoor {
	if cfg.FrontDoor == "rest-waf" {
		return addRestWafFrontDoor(stack, cfg, gateway, logRetention)
	}
	return addHTTPFrontDoor(stack, cfg, gateway, logRetention)
}

// addHTTPFrontDoor is the HTTP API with the gateway's routes, stage and
// route throttling, and its access log.
func addHTTPFrontDoor(stack awscdk.Stack, cfg Config, gateway awslambda.Function, logRetention awslogs.RetentionDays) *frontDoor {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String("toolrag-" + cfg.Stage),
		Description:        jsii.String("toolrag MCP gateway"),
		CreateDefaultStage: jsii.Bool(false),
	})
	stageOpts := &awsapigatewayv2.HttpStageOptions{StageName: jsii.String("$default"), AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(cfg.Throttle.RateLimit), BurstLimit: jsii.Number(cfg.Throttle.BurstLimit)}}
	if cfg.Domain != nil {
		cert := awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("Certificate"), jsii.String(cfg.Domain.CertificateArn))
		dn := awsapigatewayv2.NewDomainName(stack, jsii.String("Domain"), &awsapigatewayv2.DomainNameProps{
			DomainName: jsii.String(cfg.Domain.Name), Certificate: cert,
		})
		stageOpts.DomainMapping = &awsapigatewayv2.DomainMappingOptions{DomainName: dn}
		awscdk.NewCfnOutput(stack, jsii.String("CustomDomainTarget"), &awscdk.CfnOutputProps{
			Value:       dn.RegionalDomainName(),
			Description: jsii.String("Point a CNAME (or alias record) for " + cfg.Domain.Name + " at this name"),
		})
		awscdk.NewCfnOutput(stack, jsii.String("McpCustomUrl"), &awscdk.CfnOutputProps{Value: jsii.String("https://" + cfg.Domain.Name + cfg.McpPath)})
	}
	stage := api.AddStage(jsii.String("DefaultStage"), stageOpts)
	addAccessLogs(stack, stage, logRetention)
	// Per-route limits (the routes that need no credential, by default).
	routeSettings := map[string]interface{}{}
	for _, route := range sortedKeys(cfg.Throttle.Routes) {
		l := cfg.Throttle.Routes[route]
		routeSettings[route] = map[string]interface{}{"ThrottlingRateLimit": l.RateLimit, "ThrottlingBurstLimit": l.BurstLimit}
	}
	if len(routeSettings) > 0 {
		stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetRouteSettings(routeSettings)
	}
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("GatewayIntegration"), gateway, nil)
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String(cfg.McpPath),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST, awsapigatewayv2.HttpMethod_GET, awsapigatewayv2.HttpMethod_DELETE},
		Integration: integration,
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/tool-rag/{proxy+}"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
		Integration: integration,
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/health"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
		Integration: integration,
	})
	// OAuth discovery (RFC 9728) and, for a gateway without OAuth, the
	// registration endpoint OAuth clients try, answered with "use an API key".
	for _, r := range []struct {
		path   string
		method awsapigatewayv2.HttpMethod
	}{
		{"/.well-known/oauth-protected-resource", awsapigatewayv2.HttpMethod_GET},
		{"/.well-known/oauth-protected-resource" + cfg.McpPath, awsapigatewayv2.HttpMethod_GET},
		{"/register", awsapigatewayv2.HttpMethod_POST},
		// Per-principal upstream identity (docs/upstream-auth.md): the
		// connect link, its sign-in, the authorization servers' redirect
		// and the gateway's client metadata document.
		{"/connect/{token}", awsapigatewayv2.HttpMethod_GET},
		{"/connect/{token}", awsapigatewayv2.HttpMethod_POST},
		{"/connect-callback", awsapigatewayv2.HttpMethod_GET},
		{"/connect-client.json", awsapigatewayv2.HttpMethod_GET},
	} {
		api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path: jsii.String(r.path), Methods: &[]awsapigatewayv2.HttpMethod{r.method}, Integration: integration,
		})
	}
	// The operator console's static app (its data comes from
	// /tool-rag/admin/*, behind an admin key).
	for _, p := range []string{"/console", "/console/{proxy+}"} {
		api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(p),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
			Integration: integration,
		})
	}
	return &frontDoor{
		httpAPI: api, url: stage.Url(),
		metric: func(name, stat string) awscloudwatch.IMetric {
			return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String(name),
				DimensionsMap: &map[string]*string{"ApiId": api.ApiId(), "Stage": jsii.String("$default")},
				Statistic:     jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(5)),
			})
		},
		serverErrors: "5xx", clientErrors: "4xx",
	}
}

// addRestWafFrontDoor is a REST API (Lambda proxy, payload 1.0, which the
// gateway function reads as well) with stage throttling and an access log,
// behind an AWS WAF web ACL: a rate-based rule that blocks a client IP
// past cfg.Waf.RateLimit requests in 5 minutes, and the AWS managed
// common rule set (its 8 KB body-size rule only counts: MCP tool calls
// carry larger bodies). HTTP APIs cannot be associated with WAF, hence the
// REST API.
func addRestWafFrontDoor(stack awscdk.Stack, cfg Config, gateway awslambda.Function, logRetention awslogs.RetentionDays) *frontDoor {
	lg := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention: logRetention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	props := &awsapigateway.LambdaRestApiProps{
		Handler:     gateway,
		Proxy:       jsii.Bool(true),
		RestApiName: jsii.String("toolrag-" + cfg.Stage),
		Description: jsii.String("toolrag MCP gateway (REST API behind AWS WAF)"),
		// REST API access logs need the account's API Gateway CloudWatch
		// role; the stack sets it (an account-wide setting, kept on delete).
		CloudWatchRole:              jsii.Bool(true),
		CloudWatchRoleRemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		EndpointTypes:               &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(cfg.Stage),
			ThrottlingRateLimit:  jsii.Number(cfg.Throttle.RateLimit),
			ThrottlingBurstLimit: jsii.Number(cfg.Throttle.BurstLimit),
			MetricsEnabled:       jsii.Bool(true),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(lg),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(restAccessLogFormat)),
		},
	}
	if cfg.Domain != nil {
		props.DomainName = &awsapigateway.DomainNameOptions{
			DomainName:   jsii.String(cfg.Domain.Name),
			Certificate:  awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("Certificate"), jsii.String(cfg.Domain.CertificateArn)),
			EndpointType: awsapigateway.EndpointType_REGIONAL,
		}
	}
	api := awsapigateway.NewLambdaRestApi(stack, jsii.String("RestApi"), props)
	if cfg.Domain != nil {
		awscdk.NewCfnOutput(stack, jsii.String("CustomDomainTarget"), &awscdk.CfnOutputProps{
			Value:       api.DomainName().DomainNameAliasDomainName(),
			Description: jsii.String("Point a CNAME (or alias record) for " + cfg.Domain.Name + " at this name"),
		})
		awscdk.NewCfnOutput(stack, jsii.String("McpCustomUrl"), &awscdk.CfnOutputProps{Value: jsii.String("https://" + cfg.Domain.Name + cfg.McpPath)})
	}

	metricName := "toolrag-" + strings.ToLower(cfg.Stage)
	visibility := func(name string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true), MetricName: jsii.String(metricName + "-" + name), SampledRequestsEnabled: jsii.Bool(true),
		}
	}
	acl := awswafv2.NewCfnWebACL(stack, jsii.String("WebAcl"), &awswafv2.CfnWebACLProps{
		Scope:            jsii.String("REGIONAL"),
		Description:      jsii.String("toolrag " + cfg.Stage + ": per-IP rate limit and the AWS managed common rule set"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		VisibilityConfig: visibility("acl"),
		Rules: &[]interface{}{
			&awswafv2.CfnWebACL_RuleProperty{
				Name: jsii.String("rate-per-ip"), Priority: jsii.Number(0),
				Action: &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{}},
				Statement: &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
					Limit: jsii.Number(float64(cfg.Waf.RateLimit)), AggregateKeyType: jsii.String("IP"),
				}},
				VisibilityConfig: visibility("rate-per-ip"),
			},
			&awswafv2.CfnWebACL_RuleProperty{
				Name: jsii.String("aws-common-rule-set"), Priority: jsii.Number(1),
				OverrideAction: &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]interface{}{}},
				Statement: &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
					VendorName: jsii.String("AWS"), Name: jsii.String("AWSManagedRulesCommonRuleSet"),
					RuleActionOverrides: &[]interface{}{&awswafv2.CfnWebACL_RuleActionOverrideProperty{
						Name: jsii.String("SizeRestrictions_BODY"), ActionToUse: &awswafv2.CfnWebACL_RuleActionProperty{Count: map[string]interface{}{}},
					}},
				}},
				VisibilityConfig: visibility("common"),
			},
		},
	})
	awswafv2.NewCfnWebACLAssociation(stack, jsii.String("WebAclAssociation"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: api.DeploymentStage().StageArn(), WebAclArn: acl.AttrArn(),
	})
	awscdk.NewCfnOutput(stack, jsii.String("WebAclArn"), &awscdk.CfnOutputProps{Value: acl.AttrArn(), Description: jsii.String("AWS WAF web ACL in front of the REST API")})
	return &frontDoor{
		restAPI: api, url: api.Url(),
		metric: func(name, stat string) awscloudwatch.IMetric {
			return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String(name),
				DimensionsMap: &map[string]*string{"ApiName": jsii.String("toolrag-" + cfg.Stage), "Stage": jsii.String(cfg.Stage)},
				Statistic:     jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(5)),
			})
		},
		serverErrors: "5XXError", clientErrors: "4XXError",
	}
}

// restAccessLogFormat is accessLogFormat in the REST API's variables.
const restAccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","requestTime":"$context.requestTime",` +
	`"method":"$context.httpMethod","path":"$context.path","status":"$context.status","protocol":"$context.protocol",` +
	`"responseLength":"$context.responseLength","latencyMs":"$context.responseLatency",` +
	`"integrationLatencyMs":"$context.integration.latency","integrationStatus":"$context.integration.status",` +
	`"wafStatus":"$context.waf.status","error":"$context.error.message"}`
