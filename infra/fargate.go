package main

// The upstream servers a stack runs itself: each docker or stdio server as
// a Fargate service behind a Cloud Map name (stdio ones through `toolrag
// bridge`, reached with a hop credential), and its registry entry.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapplicationautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsservicediscovery"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// addServerService deploys one docker or stdio server on Fargate behind a
// Cloud Map name and returns its MCP URL and, for a stdio server, its hop
// credential. The service runs Fargate.DesiredCount tasks (ECS spreads
// them over the subnets' zones) with target-tracking autoscaling on CPU
// up to Fargate.MaxCount; each container has a read-only root
// filesystem with a scratch volume at /tmp and drops every Linux
// capability; a stdio server's runs as Fargate.User behind `toolrag
// bridge`, which requires the hop credential (a Secrets Manager secret
// generated per server) and whose MCP-speaking probe is the health check.
func addServerService(stack awscdk.Stack, cfg Config, s Server, cluster awsecs.Cluster, vpc awsec2.IVpc,
	subnets *awsec2.SubnetSelection, fnSG awsec2.SecurityGroup, ns awsservicediscovery.PrivateDnsNamespace, buildDir string) (string, awsecs.FargateService, awssecretsmanager.Secret, error) {
	scope := constructs.NewConstruct(stack, jsii.String("Server-"+s.Host))
	platform := awsecrassets.Platform_LINUX_ARM64()
	cpuArch := awsecs.CpuArchitecture_ARM64()
	if cfg.Fargate.Architecture == "x86_64" {
		platform, cpuArch = awsecrassets.Platform_LINUX_AMD64(), awsecs.CpuArchitecture_X86_64()
	}
	var (
		dir     string
		port    int
		path    string
		command []string
	)
	switch s.Kind {
	case "docker":
		dir = filepath.Join(cfg.RepoRoot, filepath.FromSlash(s.Build))
		port, path, command = s.Port, s.Path, s.Command
	case "stdio":
		dir = filepath.Join(buildDir, s.Host)
		base := s.BaseImage
		if base == "" {
			base = cfg.Fargate.StdioBaseImage
		}
		found, err := StageStdio(dir, cfg.RepoRoot, s, cfg.Fargate, base)
		if err != nil {
			return "", nil, nil, err
		}
		if !found {
			// Like the functions' placeholder code: synth works on a fresh
			// checkout (make synth, make test); the image's stand-in exits
			// saying what to do, and make deploy builds the bridge first.
			awscdk.Annotations_Of(scope).AddWarningV2(jsii.String("toolrag:placeholder-bridge"), jsii.String(fmt.Sprintf(
				"stdio server %q needs the toolrag bridge binary at %s (linux/%s); the image gets a stand-in that cannot serve. Run make build-bridge (make deploy does) before deploying.",
				s.ID, cfg.Fargate.BridgeBinary, cfg.Fargate.Architecture)), nil)
		}
		port, path = cfg.Fargate.BridgePort, "/mcp"
	}
	image := awsecrassets.NewDockerImageAsset(scope, jsii.String("Image"), &awsecrassets.DockerImageAssetProps{
		Directory: jsii.String(dir), Platform: platform,
	})
	task := awsecs.NewFargateTaskDefinition(scope, jsii.String("Task"), &awsecs.FargateTaskDefinitionProps{
		Cpu:             jsii.Number(float64(cfg.Fargate.Cpu)),
		MemoryLimitMiB:  jsii.Number(float64(cfg.Fargate.MemoryMiB)),
		RuntimePlatform: &awsecs.RuntimePlatform{CpuArchitecture: cpuArch, OperatingSystemFamily: awsecs.OperatingSystemFamily_LINUX()},
	})
	logGroup := awslogs.NewLogGroup(scope, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention: retentionDays(cfg.LogRetentionDays), RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	envVars := map[string]*string{}
	for k, v := range s.Env {
		envVars[k] = jsii.String(v)
	}
	// The root filesystem is read-only: /tmp is a task volume on the
	// task's ephemeral storage (Fargate has no tmpfs mounts), and HOME
	// points there for servers that write caches under it.
	task.AddVolume(&awsecs.Volume{Name: jsii.String("tmp")})
	if _, ok := envVars["HOME"]; !ok && s.Kind == "stdio" {
		envVars["HOME"] = jsii.String("/tmp")
	}
	if _, ok := envVars["TMPDIR"]; !ok {
		envVars["TMPDIR"] = jsii.String("/tmp")
	}
	secrets := map[string]awsecs.Secret{}
	for _, k := range sortedKeys(s.Secrets) {
		name := cfg.SecretsPrefix + s.Secrets[k]
		if cfg.SecretsStore == "ssm" {
			p := awsssm.StringParameter_FromSecureStringParameterAttributes(scope, jsii.String("Param"+k), &awsssm.SecureStringParameterAttributes{ParameterName: jsii.String(name)})
			secrets[k] = awsecs.Secret_FromSsmParameter(p)
		} else {
			sec := awssecretsmanager.Secret_FromSecretNameV2(scope, jsii.String("Secret"+k), jsii.String(name))
			secrets[k] = awsecs.Secret_FromSecretsManager(sec, nil)
		}
	}
	var hop awssecretsmanager.Secret
	if s.Kind == "stdio" {
		hop = awssecretsmanager.NewSecret(scope, jsii.String("HopSecret"), &awssecretsmanager.SecretProps{
			SecretName:  jsii.String(cfg.SecretsPrefix + HopSecretName(s.ID)),
			Description: jsii.String("toolrag: the hop credential of upstream " + s.ID + " (toolrag bridge requires it from the gateway)"),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
			},
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		secrets[bridgeTokenEnv] = awsecs.Secret_FromSecretsManager(hop, nil)
	}
	linux := awsecs.NewLinuxParameters(scope, jsii.String("Linux"), &awsecs.LinuxParametersProps{InitProcessEnabled: jsii.Bool(true)})
	linux.DropCapabilities(awsecs.Capability_ALL)
	container := &awsecs.ContainerDefinitionOptions{
		ReadonlyRootFilesystem: jsii.Bool(true),
		LinuxParameters:        linux,
		Image:                  awsecs.ContainerImage_FromDockerImageAsset(image),
		Environment:            &envVars,
		Secrets:                &secrets,
		Logging:                awsecs.LogDriver_AwsLogs(&awsecs.AwsLogDriverProps{StreamPrefix: jsii.String(s.Host), LogGroup: logGroup}),
		PortMappings:           &[]*awsecs.PortMapping{{ContainerPort: jsii.Number(float64(port))}},
	}
	if len(command) > 0 {
		container.Command = jsii.Strings(command...)
	}
	if s.Kind == "stdio" {
		container.User = jsii.String(cfg.Fargate.User)
		// `toolrag bridge --probe` asks the bridge's /health (a ping of the
		// stdio server), then initializes, pings and lists the tools over
		// MCP with the hop credential: no curl needed in the image.
		container.HealthCheck = &awsecs.HealthCheck{
			Command:     jsii.Strings("CMD", "/usr/local/bin/toolrag", "bridge", "--probe", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--path", path),
			Interval:    awscdk.Duration_Seconds(jsii.Number(30)),
			Timeout:     awscdk.Duration_Seconds(jsii.Number(10)),
			StartPeriod: awscdk.Duration_Seconds(jsii.Number(60)),
			Retries:     jsii.Number(3),
		}
	}
	cd := task.AddContainer(jsii.String("server"), container)
	cd.AddMountPoints(&awsecs.MountPoint{ContainerPath: jsii.String("/tmp"), SourceVolume: jsii.String("tmp"), ReadOnly: jsii.Bool(false)})
	sg := awsec2.NewSecurityGroup(scope, jsii.String("SecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc: vpc, Description: jsii.String("toolrag upstream " + s.ID), AllowAllOutbound: jsii.Bool(true),
	})
	sg.AddIngressRule(fnSG, awsec2.Port_Tcp(jsii.Number(float64(port))), jsii.String("toolrag functions"), nil)
	svc := awsecs.NewFargateService(scope, jsii.String("Service"), &awsecs.FargateServiceProps{
		Cluster:        cluster,
		TaskDefinition: task,
		DesiredCount:   jsii.Number(float64(cfg.Fargate.DesiredCount)),
		// Start new tasks before stopping old ones: the server stays
		// reachable during deploys.
		MinHealthyPercent: jsii.Number(100),
		MaxHealthyPercent: jsii.Number(200),
		VpcSubnets:        subnets,
		SecurityGroups:    &[]awsec2.ISecurityGroup{sg},
		AssignPublicIp:    jsii.Bool(false),
		CircuitBreaker:    &awsecs.DeploymentCircuitBreaker{Rollback: jsii.Bool(true)},
		CloudMapOptions: &awsecs.CloudMapOptions{
			Name: jsii.String(s.Host), CloudMapNamespace: ns,
			DnsRecordType: awsservicediscovery.DnsRecordType_A, DnsTtl: awscdk.Duration_Seconds(jsii.Number(10)),
		},
	})
	scaling := svc.AutoScaleTaskCount(&awsapplicationautoscaling.EnableScalingProps{
		MinCapacity: jsii.Number(float64(cfg.Fargate.DesiredCount)), MaxCapacity: jsii.Number(float64(cfg.Fargate.MaxCount)),
	})
	scaling.ScaleOnCpuUtilization(jsii.String("CpuScaling"), &awsecs.CpuUtilizationScalingProps{
		TargetUtilizationPercent: jsii.Number(float64(cfg.Fargate.CpuTarget)),
		ScaleInCooldown:          awscdk.Duration_Minutes(jsii.Number(5)),
		ScaleOutCooldown:         awscdk.Duration_Minutes(jsii.Number(1)),
	})
	return fmt.Sprintf("http://%s.%s:%d%s", s.Host, cfg.Vpc.Namespace, port, path), svc, hop, nil
}

// addRegistryEntry writes the server's registry item on deploy (UpdateItem
// on create and update, so health attributes survive) and deletes it when
// the server leaves the list.
func addRegistryEntry(stack awscdk.Stack, registry awsdynamodb.Table, s Server, url string, hop bool, logGroup awslogs.LogGroup) {
	transport := s.Transport
	if s.Kind == "stdio" {
		transport = "streamable_http" // served by toolrag bridge
	}
	headers := s.Headers
	if hop {
		// The bridge's hop credential, resolved by the functions from
		// Secrets Manager (a ${VAR} reference, never the value).
		headers = map[string]string{}
		for k, v := range s.Headers {
			headers[k] = v
		}
		headers["Authorization"] = "Bearer ${" + HopSecretName(s.ID) + "}"
	}
	// The gateway's registry entry format (config.DecodeServerConfig reads it).
	doc, _ := json.Marshal(upstream.ServerConfig{Transport: transport, URL: url, Headers: headers})
	key := map[string]interface{}{"server_id": map[string]interface{}{"S": s.ID}}
	put := &customresources.AwsSdkCall{
		Service: jsii.String("DynamoDB"),
		Action:  jsii.String("UpdateItem"),
		Parameters: map[string]interface{}{
			"TableName":                 registry.TableName(),
			"Key":                       key,
			"UpdateExpression":          "SET #c = :c, #s = :s",
			"ExpressionAttributeNames":  map[string]interface{}{"#c": "config", "#s": "source"},
			"ExpressionAttributeValues": map[string]interface{}{":c": map[string]interface{}{"S": string(doc)}, ":s": map[string]interface{}{"S": "deploy"}},
		},
		PhysicalResourceId: customresources.PhysicalResourceId_Of(jsii.String("registry/" + s.ID)),
	}
	customresources.NewAwsCustomResource(stack, jsii.String("Registry-"+s.ID), &customresources.AwsCustomResourceProps{
		OnCreate: put,
		OnUpdate: put,
		OnDelete: &customresources.AwsSdkCall{
			Service:    jsii.String("DynamoDB"),
			Action:     jsii.String("DeleteItem"),
			Parameters: map[string]interface{}{"TableName": registry.TableName(), "Key": key},
		},
		Policy: customresources.AwsCustomResourcePolicy_FromStatements(&[]awsiam.PolicyStatement{
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("dynamodb:UpdateItem", "dynamodb:DeleteItem"), Resources: &[]*string{registry.TableArn()},
			}),
		}),
		InstallLatestAwsSdk: jsii.Bool(false),
		LogGroup:            logGroup,
	})
}

// bridgeTokenEnv is pkg/bridge.TokenEnv: where `toolrag bridge` reads the
// hop credential.
const bridgeTokenEnv = "TOOLRAG_BRIDGE_TOKEN"

// hopSecretPrefix is pkg/awsrt.HopSecretPrefix: a ${VAR} name with it is
// read from Secrets Manager whatever the secrets store.
const hopSecretPrefix = "TOOLRAG_HOP_"

// HopSecretName is the ${VAR} name (and, after the secrets prefix, the
// Secrets Manager secret name) of server id's hop credential:
// TOOLRAG_HOP_ and the id in upper case with every other character than
// letters and digits as _.
func HopSecretName(id string) string {
	b := []byte(strings.ToUpper(id))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return hopSecretPrefix + string(b)
}

func hasStdio(servers []Server) bool {
	for _, s := range servers {
		if s.Kind == "stdio" {
			return true
		}
	}
	return false
}
