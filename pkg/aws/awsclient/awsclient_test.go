package awsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"10.0.0.1": false, "example.com": false, "127.example.com": false, "": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// An emulator endpoint on loopback gets dummy credentials and a region
// when the environment has none; another endpoint does not.
func TestLoadEmulatorCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	ctx := context.Background()
	cfg, err := Load(ctx, "http://127.0.0.1:8000")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "us-east-1" {
		t.Errorf("region %q, want us-east-1", cfg.Region)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "local" {
		t.Errorf("credentials %q, %v; want the emulator's dummy ones", creds.AccessKeyID, err)
	}
	cfg, err = Load(ctx, "https://s3.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Credentials != nil {
		if c, err := cfg.Credentials.Retrieve(ctx); err == nil && c.AccessKeyID == "local" {
			t.Error("a remote endpoint got the emulator's dummy credentials")
		}
	}
}

func TestClientsUseEndpointAndTimeouts(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "eu-west-1")
	s, err := S3(ctx, "http://127.0.0.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Options(); o.BaseEndpoint == nil || *o.BaseEndpoint != "http://127.0.0.1:9000" || !o.UsePathStyle {
		t.Errorf("S3 options: endpoint %v, path style %v", o.BaseEndpoint, o.UsePathStyle)
	}
	sm, err := SecretsManager(ctx, "", Timeouts{Attempt: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sm.Options().BaseEndpoint != nil {
		t.Error("no endpoint override was asked for")
	}
	if got := (Timeouts{Attempt: time.Second}).or(SecretsTimeouts); got.Attempt != time.Second || got.Operation != SecretsTimeouts.Operation {
		t.Errorf("or: %+v", got)
	}
}

// TestBoundedClientsFailFast: the SSM, Secrets Manager and KMS clients
// give up on a service that accepts the connection but never answers
// within their operation deadline, and say which service it was.
func TestBoundedClientsFailFast(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop)
	ctx := context.Background()
	short := Timeouts{Attempt: 200 * time.Millisecond, Operation: 500 * time.Millisecond}
	defer func(k Timeouts) { KMSTimeouts = k }(KMSTimeouts)
	KMSTimeouts = short
	calls := []struct {
		service string
		call    func() error
	}{
		{"SSM Parameter Store", func() error {
			c, err := SSM(ctx, hang.URL, short)
			if err == nil {
				_, err = c.GetParametersByPath(ctx, &ssm.GetParametersByPathInput{Path: aws.String("/x")})
			}
			return err
		}},
		{"Secrets Manager", func() error {
			c, err := SecretsManager(ctx, hang.URL, short)
			if err == nil {
				_, err = c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("x")})
			}
			return err
		}},
		{"KMS", func() error {
			c, err := KMS(ctx, hang.URL)
			if err == nil {
				_, err = c.ListKeys(ctx, &kms.ListKeysInput{})
			}
			return err
		}},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		if took := time.Since(start); err == nil || !strings.Contains(err.Error(), c.service+" did not answer within") || took > 5*time.Second {
			t.Errorf("%s: error %v after %v, want its deadline", c.service, err, took)
		}
	}
}
