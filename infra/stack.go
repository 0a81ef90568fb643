package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsservicediscovery"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// functionNames returns the functions the stack deploys: gateway, sync
// and health, as built by `make build-lambdas` into dist/<name>.zip, and
// with the streamed front door gatewayStream (the gateway's code).
func (c *Config) functionNames() []string {
	names := []string{"gateway", "sync", "health"}
	if c.Streamed != nil {
		names = append(names, "gatewayStream")
	}
	return names
}

// StackProps configures NewGatewayStack.
type StackProps struct {
	awscdk.StackProps
	Config  Config   // defaults already applied and validated
	Servers []Server // from LoadServers; nil deploys no upstream servers
}

// Deployment exposes the parts of the stack that tests and outputs use.
type Deployment struct {
	Stack     awscdk.Stack
	Api       awsapigatewayv2.HttpApi // nil with the rest-waf front door
	RestApi   awsapigateway.RestApi   // the rest-waf front door, else nil
	Functions map[string]awslambda.Function
	Tables    map[string]awsdynamodb.Table // tools, keys, registry, sessions
	Bucket    awss3.Bucket
	Vpc       awsec2.IVpc // nil when no server runs on Fargate
	Services  map[string]awsecs.FargateService
	// HopSecrets are the stdio servers' hop credentials by server id.
	HopSecrets map[string]awssecretsmanager.Secret
	// ServerURLs maps every server id to the URL the gateway reaches it at.
	ServerURLs map[string]string
}

// NewGatewayStack defines the whole deployment: HTTP API, the three
// functions, tables, index bucket, schedules, and one Fargate service per
// docker or stdio server with its registry entry.
func NewGatewayStack(scope constructs.Construct, id string, props *StackProps) (*Deployment, error) {
	cfg := props.Config
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	// Not on the dashboard and the autoscaling targets: cfn-lint's schemas
	// of those types have no Tags yet (E3002).
	untagged := &awscdk.TagProps{ExcludeResourceTypes: jsii.Strings("AWS::CloudWatch::Dashboard", "AWS::ApplicationAutoScaling::ScalableTarget")}
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("toolrag-mcp-gateway"), untagged)
	awscdk.Tags_Of(stack).Add(jsii.String("stage"), jsii.String(cfg.Stage), untagged)
	g := &Deployment{Stack: stack, Functions: map[string]awslambda.Function{}, Tables: map[string]awsdynamodb.Table{}, Services: map[string]awsecs.FargateService{}, ServerURLs: map[string]string{}, HopSecrets: map[string]awssecretsmanager.Secret{}}
	prod := cfg.Stage == "prod"
	removal := awscdk.RemovalPolicy_DESTROY
	if prod {
		removal = awscdk.RemovalPolicy_RETAIN
	}

	// Tables.
	table := func(name, pk string, ttl string) awsdynamodb.Table {
		t := awsdynamodb.NewTable(stack, jsii.String(strings.ToUpper(name[:1])+name[1:]+"Table"), &awsdynamodb.TableProps{
			PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String(pk), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
			DeletionProtection:               jsii.Bool(prod),
			Encryption:                       awsdynamodb.TableEncryption_AWS_MANAGED,
			RemovalPolicy:                    removal,
			TimeToLiveAttribute:              strPtr(ttl),
			SortKey: func() *awsdynamodb.Attribute {
				switch name {
				case "tools":
					return &awsdynamodb.Attribute{Name: jsii.String("sk"), Type: awsdynamodb.AttributeType_STRING}
				case "callseq":
					return &awsdynamodb.Attribute{Name: jsii.String("to_tool"), Type: awsdynamodb.AttributeType_STRING}
				case "vault":
					return &awsdynamodb.Attribute{Name: jsii.String("server"), Type: awsdynamodb.AttributeType_STRING}
				}
				return nil
			}(),
		})
		g.Tables[name] = t
		return t
	}
	tools := table("tools", "pk", "")
	keys := table("keys", "secret_hash", "")
	keys.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String("byId"),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String("key_id"), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	registry := table("registry", "server_id", "")
	sessions := table("sessions", "session_id", "expires_at")
	// The opt-in call-sequence counts: one item per tool pair.
	callseq := table("callseq", "from_tool", "")
	// The token vault: one sealed grant per (principal, server), the used
	// nonces of connect links; expired grants leave by TTL.
	vaultTable := table("vault", "principal", "expires_at")

	// Index bucket.
	bucket := awss3.NewBucket(stack, jsii.String("IndexBucket"), &awss3.BucketProps{
		Versioned:         jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     removal,
		AutoDeleteObjects: jsii.Bool(false),
		LifecycleRules: &[]*awss3.LifecycleRule{
			{
				Id:                                  jsii.String("expire-noncurrent-versions"),
				NoncurrentVersionExpiration:         awscdk.Duration_Days(jsii.Number(float64(cfg.IndexRetentionDays))),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
				ExpiredObjectDeleteMarker:           jsii.Bool(true),
			},
			{
				// Content-addressed index files no longer named by
				// <prefix>current.json are tagged superseded=true by the
				// publisher; only those expire, so the current index never
				// does, however old it is.
				Id:         jsii.String("expire-superseded-indexes"),
				Prefix:     jsii.String(cfg.IndexPrefix + "indexes/"),
				TagFilters: &map[string]interface{}{"superseded": "true"},
				Expiration: awscdk.Duration_Days(jsii.Number(float64(cfg.IndexRetentionDays))),
			},
		},
	})
	g.Bucket = bucket

	// Network: only when some server runs on Fargate.
	var fargate []Server
	for _, s := range props.Servers {
		if s.Kind == "docker" || s.Kind == "stdio" {
			fargate = append(fargate, s)
		}
	}
	var (
		vpc        awsec2.IVpc
		subnets    *awsec2.SubnetSelection
		fnSG       awsec2.SecurityGroup
		namespace  awsservicediscovery.PrivateDnsNamespace
		cluster    awsecs.Cluster
		fnSubnetTy awsec2.SubnetType
	)
	if len(fargate) > 0 {
		fnSubnetTy = awsec2.SubnetType_PRIVATE_WITH_EGRESS
		if cfg.Vpc.Egress == "endpoints" {
			fnSubnetTy = awsec2.SubnetType_PRIVATE_ISOLATED
		}
		if cfg.Vpc.ExistingVpcId != "" {
			vpc = awsec2.Vpc_FromLookup(stack, jsii.String("Vpc"), &awsec2.VpcLookupOptions{VpcId: jsii.String(cfg.Vpc.ExistingVpcId)})
		} else {
			natGateways := float64(cfg.Vpc.NatGateways)
			subnetCfg := []*awsec2.SubnetConfiguration{
				{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)},
				{Name: jsii.String("private"), SubnetType: fnSubnetTy, CidrMask: jsii.Number(22)},
			}
			if cfg.Vpc.Egress == "endpoints" {
				natGateways = 0
				subnetCfg = subnetCfg[1:]
			}
			// The zones are the region's first MaxAzs (Fn::GetAZs at
			// deploy time), not names looked up at synth time (cfn-lint
			// W3010; offline synths got the placeholders dummy1a, dummy1b).
			azs := make([]*string, cfg.Vpc.MaxAzs)
			for i := range azs {
				azs[i] = awscdk.Fn_Select(jsii.Number(float64(i)), awscdk.Fn_GetAzs(jsii.String("")))
			}
			vpc = awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
				AvailabilityZones:            &azs,
				NatGateways:                  jsii.Number(natGateways),
				SubnetConfiguration:          &subnetCfg,
				RestrictDefaultSecurityGroup: jsii.Bool(false),
				GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
					"S3":       {Service: awsec2.GatewayVpcEndpointAwsService_S3()},
					"DynamoDB": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
				},
			})
		}
		subnets = &awsec2.SubnetSelection{SubnetType: fnSubnetTy}
		if cfg.Vpc.Egress == "endpoints" {
			endpoints := map[string]awsec2.InterfaceVpcEndpointAwsService{
				"Ecr":       awsec2.InterfaceVpcEndpointAwsService_ECR(),
				"EcrDocker": awsec2.InterfaceVpcEndpointAwsService_ECR_DOCKER(),
				"Logs":      awsec2.InterfaceVpcEndpointAwsService_CLOUDWATCH_LOGS(),
				"Lambda":    awsec2.InterfaceVpcEndpointAwsService_LAMBDA(),
			}
			if cfg.SecretsStore == "ssm" {
				endpoints["Ssm"] = awsec2.InterfaceVpcEndpointAwsService_SSM()
			}
			if cfg.SecretsStore != "ssm" || hasStdio(fargate) {
				// The stdio servers' hop credentials live in Secrets Manager.
				endpoints["SecretsManager"] = awsec2.InterfaceVpcEndpointAwsService_SECRETS_MANAGER()
			}
			if cfg.Embedder.Kind == "bedrock" || cfg.Reranker.Kind == "bedrock" {
				endpoints["BedrockRuntime"] = awsec2.InterfaceVpcEndpointAwsService_BEDROCK_RUNTIME()
			}
			if cfg.Reranker.Kind == "bedrock" {
				endpoints["BedrockAgentRuntime"] = awsec2.InterfaceVpcEndpointAwsService_BEDROCK_AGENT_RUNTIME()
			}
			for _, name := range sortedKeys(endpoints) {
				awsec2.NewInterfaceVpcEndpoint(stack, jsii.String(name+"Endpoint"), &awsec2.InterfaceVpcEndpointProps{
					Vpc: vpc, Service: endpoints[name], Subnets: subnets, PrivateDnsEnabled: jsii.Bool(true),
				})
			}
		}
		fnSG = awsec2.NewSecurityGroup(stack, jsii.String("FunctionsSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("toolrag functions"), AllowAllOutbound: jsii.Bool(true),
		})
		namespace = awsservicediscovery.NewPrivateDnsNamespace(stack, jsii.String("Namespace"), &awsservicediscovery.PrivateDnsNamespaceProps{
			Name: jsii.String(cfg.Vpc.Namespace), Vpc: vpc, Description: jsii.String("toolrag upstream MCP servers"),
		})
		cluster = awsecs.NewCluster(stack, jsii.String("Cluster"), &awsecs.ClusterProps{Vpc: vpc})
		g.Vpc = vpc
	}

	// Functions.
	logRetention := retentionDays(cfg.LogRetentionDays)
	env := map[string]*string{
		"TOOL_RAG_TOOLS_TABLE":    tools.TableName(),
		"TOOL_RAG_KEYS_TABLE":     keys.TableName(),
		"TOOL_RAG_REGISTRY_TABLE": registry.TableName(),
		"TOOL_RAG_SESSIONS_TABLE": sessions.TableName(),
		"TOOL_RAG_CALLSEQ_TABLE":  callseq.TableName(),
		"TOOL_RAG_VAULT_TABLE":    vaultTable.TableName(),
		"TOOL_RAG_CALL_SEQUENCES": jsii.String(strconv.FormatBool(cfg.CallSequences)),
		"TOOL_RAG_INDEX_BUCKET":   bucket.BucketName(),
		"TOOL_RAG_INDEX_PREFIX":   jsii.String(cfg.IndexPrefix),
		"TOOL_RAG_INDEX_REFRESH":  jsii.String(strconv.Itoa(cfg.IndexRefreshSeconds)),
		"TOOL_RAG_EMBEDDER":       jsii.String(cfg.Embedder.Kind),
		"TOOL_RAG_RERANKER":       jsii.String(cfg.Reranker.Kind),
		"TOOL_RAG_SECRETS_PREFIX": jsii.String(cfg.SecretsPrefix),
		"TOOL_RAG_SECRETS_STORE":  jsii.String(cfg.SecretsStore),
		"MCP_GATEWAY_MCP_PATH":    jsii.String(cfg.McpPath),
	}
	switch cfg.Embedder.Kind {
	case "bedrock":
		env["TOOL_RAG_BEDROCK_MODEL_ID"] = jsii.String(cfg.Embedder.ModelID)
		env["TOOL_RAG_BEDROCK_DIM"] = jsii.String(strconv.Itoa(cfg.Embedder.Dims))
	case "url":
		env["TOOL_RAG_EMBED_URL"] = jsii.String(cfg.Embedder.URL)
	}
	switch cfg.Reranker.Kind {
	case "bedrock":
		env["TOOL_RAG_RERANKER_BEDROCK_MODEL"] = jsii.String(cfg.Reranker.ModelID)
	case "url":
		env["TOOL_RAG_RERANKER_URL"] = jsii.String(cfg.Reranker.URL)
	}
	descriptions := map[string]string{
		"gateway":       "toolrag MCP gateway: /mcp, /tool-rag/*, /health",
		"sync":          "toolrag sync: pulls upstream tool lists, re-embeds, publishes the index",
		"health":        "toolrag health: probes every upstream and records its status",
		"gatewayStream": "toolrag MCP gateway, streamed front door (Function URL, RESPONSE_STREAM) and the gateway's own tasks",
	}
	for _, name := range cfg.functionNames() {
		size := cfg.Functions.Size(name) // Defaults and Validate ran: within Lambda's limits
		fnEnv := map[string]*string{}
		for k, v := range env {
			fnEnv[k] = v
		}
		logGroup := awslogs.NewLogGroup(stack, jsii.String(title(name)+"Logs"), &awslogs.LogGroupProps{
			Retention: logRetention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		codeName := strings.TrimSuffix(name, "Stream") // gatewayStream runs the gateway's code
		code, placeholder := functionCode(cfg.DistDir, codeName)
		fp := &awslambda.FunctionProps{
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         code,
			MemorySize:   jsii.Number(float64(size.MemoryMiB)),
			Timeout:      awscdk.Duration_Seconds(jsii.Number(float64(size.TimeoutSeconds))),
			Description:  jsii.String(descriptions[name]),
			Environment:  &fnEnv,
			LogGroup:     logGroup,
			// JSON lines (the functions log with slog's JSON handler when
			// Lambda says so): queryable by field in Logs Insights.
			LoggingFormat: awslambda.LoggingFormat_JSON,
			// X-Ray active tracing: the invocation's segment, which the
			// functions' own spans continue (docs/observability.md).
			Tracing: awslambda.Tracing_ACTIVE,
		}
		tracingEnv(cfg.Tracing, fnEnv)
		if arn := cfg.Tracing.CollectorLayerArn; arn != "" {
			fp.Layers = &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(stack, jsii.String(title(name)+"CollectorLayer"), jsii.String(arn))}
		}
		if vpc != nil {
			fp.Vpc, fp.VpcSubnets, fp.SecurityGroups = vpc, subnets, &[]awsec2.ISecurityGroup{fnSG}
		}
		switch {
		case name == "sync":
			// One sync at a time: a schedule and a reindex never race
			// over the tools table and the index pointer.
			fp.ReservedConcurrentExecutions = jsii.Number(1)
		case strings.HasPrefix(name, "gateway") && size.ReservedConcurrency > 0:
			// A flood of requests (bad tokens included) scales the
			// gateway only this far: the rest are throttled (429) at no
			// Lambda cost, and the account's other functions keep theirs.
			fp.ReservedConcurrentExecutions = jsii.Number(float64(size.ReservedConcurrency))
		}
		if name == "gatewayStream" {
			// The gateway's role: every grant to the gateway is one to
			// its streamed twin.
			fp.Role = g.Functions["gateway"].Role()
		}
		fn := awslambda.NewFunction(stack, jsii.String(title(name)+"Function"), fp)
		if placeholder {
			awscdk.Annotations_Of(fn).AddWarningV2(jsii.String("toolrag:placeholder-code"), jsii.String(fmt.Sprintf(
				"%s: %s.zip not found in %s; deploying a placeholder that cannot serve. Run make build-lambdas first.", name, codeName, cfg.DistDir)), nil)
		}
		g.Functions[name] = fn
	}
	gateway, syncFn, health := g.Functions["gateway"], g.Functions["sync"], g.Functions["health"]
	// The functions that run the gateway (the gateway and, with the
	// streamed front door, its twin) share the role and the environment.
	gateways := []awslambda.Function{gateway}
	if fn, ok := g.Functions["gatewayStream"]; ok {
		gateways = append(gateways, fn)
	}
	setEnv := func(k string, v *string) {
		for _, fn := range gateways {
			fn.AddEnvironment(jsii.String(k), v, nil)
		}
	}
	setEnv("TOOL_RAG_SYNC_FUNCTION", syncFn.FunctionName())
	for _, name := range []string{"gateway", "gatewayStream"} {
		if fn, ok := g.Functions[name]; ok {
			for k, v := range lambdaLimitsEnv(cfg.Functions.Size(name).TimeoutSeconds) {
				fn.AddEnvironment(jsii.String(k), jsii.String(v), nil)
			}
		}
	}
	addOAuth(stack, cfg, setEnv)
	addVault(stack, cfg, gateway, setEnv, vaultTable)
	addTasks(stack, cfg, gateway, gateways[len(gateways)-1], bucket)
	addResults(gateway, bucket)
	addStreamed(stack, cfg, g.Functions["gatewayStream"], vpc != nil)

	// Permissions: each function gets only the actions it uses.
	tools.GrantReadData(gateway)
	keys.GrantReadData(gateway)
	registry.GrantReadData(gateway)
	sessions.GrantReadWriteData(gateway)
	callseq.GrantReadWriteData(gateway) // adds the counts, reads them with each catalog
	syncFn.GrantInvoke(gateway)

	tools.GrantReadWriteData(syncFn)
	callseq.GrantReadWriteData(syncFn) // drops the pairs of tools that left the catalog
	registry.GrantReadData(syncFn)
	// sync stores each server's prompts and resources on its registry
	// item (UpdateItem); it never creates or deletes entries.
	registry.Grant(syncFn, jsii.String("dynamodb:UpdateItem"))

	// health records each server's status with UpdateItem on its registry
	// item; it never creates or deletes entries.
	registry.GrantReadData(health)
	registry.Grant(health, jsii.String("dynamodb:UpdateItem"))

	objects := bucket.ArnForObjects(jsii.String(cfg.IndexPrefix + "*"))
	listIndex := func(fn awslambda.Function) {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:    jsii.Strings("s3:ListBucket"),
			Resources:  &[]*string{bucket.BucketArn()},
			Conditions: &map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": cfg.IndexPrefix + "*"}},
		}))
	}
	gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:GetObject"), Resources: &[]*string{objects},
	}))
	listIndex(gateway)
	syncFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject"),
		Resources: &[]*string{objects},
	}))
	listIndex(syncFn)

	// Upstream secrets by name under the prefix: the functions read SSM
	// with GetParametersByPath on the prefix (pkg/aws/secrets), or Secrets
	// Manager with GetSecretValue per name (TOOL_RAG_SECRETS_STORE).
	var secretResource *string
	var secretActions []string
	if cfg.SecretsStore == "ssm" {
		secretActions = []string{"ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath"}
		secretResource = awscdk.Stack_Of(stack).FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("ssm"), Resource: jsii.String("parameter"),
			ResourceName: jsii.String(strings.TrimPrefix(cfg.SecretsPrefix, "/") + "*"),
		})
	} else {
		secretActions = []string{"secretsmanager:GetSecretValue"}
		secretResource = awscdk.Stack_Of(stack).FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("secretsmanager"), Resource: jsii.String("secret"),
			ResourceName: jsii.String(cfg.SecretsPrefix + "*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})
	}
	for _, fn := range []awslambda.Function{gateway, syncFn, health} {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings(secretActions...), Resources: &[]*string{secretResource},
		}))
	}

	// Bedrock, only for the configured models and only when enabled.
	if cfg.Embedder.Kind == "bedrock" {
		arns := bedrockModelArns(stack, cfg.Embedder.ModelID)
		for _, fn := range []awslambda.Function{gateway, syncFn} {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("bedrock:InvokeModel"), Resources: &arns,
			}))
		}
	}
	if cfg.Reranker.Kind == "bedrock" {
		arns := bedrockModelArns(stack, cfg.Reranker.ModelID)
		gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("bedrock:InvokeModel"), Resources: &arns,
		}))
		// bedrock:Rerank has no resource type: it can only be granted on
		// "*"; InvokeModel above still limits which model it may run.
		gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("bedrock:Rerank"), Resources: jsii.Strings("*"),
		}))
	}

	// The front door: an HTTP API, or a REST API behind AWS WAF.
	fd := addFrontDoor(stack, cfg, gateway, logRetention)
	g.Api, g.RestApi = fd.httpAPI, fd.restAPI

	// Schedules.
	schedule := func(id, expr string, fn awslambda.Function, desc string) {
		if expr == "off" {
			return
		}
		awsevents.NewRule(stack, jsii.String(id), &awsevents.RuleProps{
			Schedule:    awsevents.Schedule_Expression(jsii.String(expr)),
			Description: jsii.String(desc),
			Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{RetryAttempts: jsii.Number(2)})},
		})
	}
	schedule("SyncSchedule", cfg.SyncSchedule, syncFn, "toolrag: resync upstream tool lists and republish the index")
	schedule("HealthSchedule", cfg.HealthSchedule, health, "toolrag: probe upstream servers")

	// Operations: failed async syncs land in a queue; alarms on errors,
	// throttles, sync failures and index staleness.
	addOperations(stack, cfg, fd, gateway, syncFn, health)

	// Upstream servers.
	if len(fargate) > 0 {
		buildDir := cfg.BuildDir
		if buildDir == "" {
			d, err := os.MkdirTemp("", "toolrag-cdk-build-")
			if err != nil {
				return nil, err
			}
			buildDir = d
		}
		for _, s := range fargate {
			url, svc, hop, err := addServerService(stack, cfg, s, cluster, vpc, subnets, fnSG, namespace, buildDir)
			if err != nil {
				return nil, err
			}
			if hop != nil {
				// The functions that call the server send its hop
				// credential (the registry entry's Authorization header).
				for _, fn := range []awslambda.Function{gateway, syncFn, health} {
					hop.GrantRead(fn, nil)
				}
				g.HopSecrets[s.ID] = hop
			}
			if s.Kind == "stdio" {
				// The bridge holds the stdio server's connection: when the
				// server announces a change of its lists, it invokes the
				// sync function for that server (toolrag bridge
				// -sync-function, damped for a server that loops).
				syncFn.GrantInvoke(svc.TaskDefinition().TaskRole())
				c := svc.TaskDefinition().DefaultContainer()
				c.AddEnvironment(jsii.String("TOOL_RAG_SYNC_FUNCTION"), syncFn.FunctionName())
				c.AddEnvironment(jsii.String("TOOL_RAG_SYNC_SERVER"), jsii.String(s.ID))
			}
			g.Services[s.ID] = svc
			g.ServerURLs[s.ID] = url
		}
	}
	for _, s := range props.Servers {
		if s.Kind == "remote" {
			g.ServerURLs[s.ID] = s.URL
		}
	}
	if len(props.Servers) > 0 {
		// One log group for the singleton function behind every registry
		// custom resource (a LogRetention resource would need logs:* on *).
		crLogs := awslogs.NewLogGroup(stack, jsii.String("RegistryWriterLogs"), &awslogs.LogGroupProps{
			Retention: logRetention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		for _, s := range props.Servers {
			addRegistryEntry(stack, registry, s, g.ServerURLs[s.ID], g.HopSecrets[s.ID] != nil, crLogs)
		}
	}

	// Outputs.
	mcpURL := awscdk.Fn_Join(jsii.String(""), &[]*string{fd.url, jsii.String(strings.TrimPrefix(cfg.McpPath, "/"))})
	out := func(id string, v *string, desc string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("McpUrl", mcpURL, "MCP endpoint (Authorization: Bearer <key>)")
	out("ApiUrl", fd.url, "Base URL: /health, /tool-rag/*")
	out("ToolsTableName", tools.TableName(), "TOOL_RAG_TOOLS_TABLE")
	out("KeysTableName", keys.TableName(), "TOOL_RAG_KEYS_TABLE")
	out("RegistryTableName", registry.TableName(), "TOOL_RAG_REGISTRY_TABLE")
	out("SessionsTableName", sessions.TableName(), "TOOL_RAG_SESSIONS_TABLE")
	out("CallSeqTableName", callseq.TableName(), "TOOL_RAG_CALLSEQ_TABLE")
	out("VaultTableName", vaultTable.TableName(), "TOOL_RAG_VAULT_TABLE")
	out("IndexBucketName", bucket.BucketName(), "TOOL_RAG_INDEX_BUCKET")
	out("SyncFunctionName", syncFn.FunctionName(), "TOOL_RAG_SYNC_FUNCTION")
	dropRoleDependsOn(stack)
	return g, nil
}

// bedrockModelArns returns the resources bedrock:InvokeModel needs for a
// model id, inference profile id or ARN.
func bedrockModelArns(stack awscdk.Stack, model string) []*string {
	if strings.HasPrefix(model, "arn:") {
		return []*string{jsii.String(model)}
	}
	for _, geo := range []string{"us.", "eu.", "apac.", "us-gov.", "global."} {
		if strings.HasPrefix(model, geo) {
			// A cross-region inference profile: the profile plus the
			// foundation model in whichever region it routes to.
			return []*string{
				awscdk.Stack_Of(stack).FormatArn(&awscdk.ArnComponents{Service: jsii.String("bedrock"), Resource: jsii.String("inference-profile"), ResourceName: jsii.String(model)}),
				awscdk.Stack_Of(stack).FormatArn(&awscdk.ArnComponents{Service: jsii.String("bedrock"), Region: jsii.String("*"), Account: jsii.String(""), Resource: jsii.String("foundation-model"), ResourceName: jsii.String(strings.TrimPrefix(model, geo))}),
			}
		}
	}
	return []*string{awscdk.Stack_Of(stack).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("bedrock"), Account: jsii.String(""), Resource: jsii.String("foundation-model"), ResourceName: jsii.String(model),
	})}
}

// functionCode returns dist/<name>.zip, else dist/<name>/ when it holds a
// bootstrap, else the placeholder folder (placeholder=true).
func functionCode(distDir, name string) (code awslambda.Code, placeholder bool) {
	zip := filepath.Join(distDir, name+".zip")
	if st, err := os.Stat(zip); err == nil && !st.IsDir() {
		return awslambda.Code_FromAsset(jsii.String(zip), nil), false
	}
	dir := filepath.Join(distDir, name)
	if _, err := os.Stat(filepath.Join(dir, "bootstrap")); err == nil {
		return awslambda.Code_FromAsset(jsii.String(dir), nil), false
	}
	return awslambda.Code_FromAsset(jsii.String(placeholderDir()), nil), true
}

// placeholderDir is infra/placeholder, found relative to this source file's
// folder at run time (the CDK app and its tests run in infra/).
func placeholderDir() string {
	if _, err := os.Stat("placeholder"); err == nil {
		return "placeholder"
	}
	return filepath.Join("infra", "placeholder")
}

var retentions = []struct {
	days int
	r    awslogs.RetentionDays
}{
	{1, awslogs.RetentionDays_ONE_DAY}, {3, awslogs.RetentionDays_THREE_DAYS}, {5, awslogs.RetentionDays_FIVE_DAYS},
	{7, awslogs.RetentionDays_ONE_WEEK}, {14, awslogs.RetentionDays_TWO_WEEKS}, {30, awslogs.RetentionDays_ONE_MONTH},
	{60, awslogs.RetentionDays_TWO_MONTHS}, {90, awslogs.RetentionDays_THREE_MONTHS}, {120, awslogs.RetentionDays_FOUR_MONTHS},
	{150, awslogs.RetentionDays_FIVE_MONTHS}, {180, awslogs.RetentionDays_SIX_MONTHS}, {365, awslogs.RetentionDays_ONE_YEAR},
	{400, awslogs.RetentionDays_THIRTEEN_MONTHS}, {545, awslogs.RetentionDays_EIGHTEEN_MONTHS}, {731, awslogs.RetentionDays_TWO_YEARS},
	{1827, awslogs.RetentionDays_FIVE_YEARS}, {3653, awslogs.RetentionDays_TEN_YEARS},
}

// retentionDays maps a day count to the nearest CloudWatch retention that
// is at least as long.
func retentionDays(days int) awslogs.RetentionDays {
	for _, r := range retentions {
		if days <= r.days {
			return r.r
		}
	}
	return awslogs.RetentionDays_TEN_YEARS
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// tracingEnv sets the functions' OpenTelemetry settings: OTLP export to
// the collector layer when there is one, and the sample ratio.
func tracingEnv(t TracingConfig, env map[string]*string) {
	if t.CollectorLayerArn == "" {
		return
	}
	env["OTEL_TRACES_EXPORTER"] = jsii.String("otlp")
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = jsii.String("http://localhost:4318")
	env["OTEL_EXPORTER_OTLP_PROTOCOL"] = jsii.String("http/protobuf")
	if t.CollectorConfig != "" {
		env["OPENTELEMETRY_COLLECTOR_CONFIG_URI"] = jsii.String(t.CollectorConfig)
	}
	if t.SampleRatio > 0 {
		env["OTEL_TRACES_SAMPLER"] = jsii.String("parentbased_traceidratio")
		env["OTEL_TRACES_SAMPLER_ARG"] = jsii.String(strconv.FormatFloat(t.SampleRatio, 'f', -1, 64))
	}
}
