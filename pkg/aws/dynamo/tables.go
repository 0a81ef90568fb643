package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of the fixed table layouts (docs/dynamodb.md).
const (
	attrPK         = "pk"          // tools table partition key
	attrSK         = "sk"          // tools table sort key
	attrSecretHash = "secret_hash" // keys table partition key
	attrKeyID      = "key_id"      // keys table GSI byId partition key
	attrServerID   = "server_id"   // registry table partition key
	attrSessionID  = "session_id"  // sessions table partition key
	attrExpiresAt  = "expires_at"  // sessions table TTL attribute (epoch seconds)

	// KeysByIDIndex is the keys table's GSI on key_id.
	KeysByIDIndex = "byId"
)

type tableSpec struct {
	name  string
	keys  []types.KeySchemaElement
	attrs []types.AttributeDefinition
	gsis  []types.GlobalSecondaryIndex
	ttl   string
}

func hashKey(name string) types.KeySchemaElement {
	return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: types.KeyTypeHash}
}

func rangeKey(name string) types.KeySchemaElement {
	return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: types.KeyTypeRange}
}

func strAttr(name string) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
}

func specs(names Tables) []tableSpec {
	all := []tableSpec{{
		name:  names.Tools,
		keys:  []types.KeySchemaElement{hashKey(attrPK), rangeKey(attrSK)},
		attrs: []types.AttributeDefinition{strAttr(attrPK), strAttr(attrSK)},
	}, {
		name:  names.Keys,
		keys:  []types.KeySchemaElement{hashKey(attrSecretHash)},
		attrs: []types.AttributeDefinition{strAttr(attrSecretHash), strAttr(attrKeyID)},
		gsis: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(KeysByIDIndex),
			KeySchema:  []types.KeySchemaElement{hashKey(attrKeyID)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}, {
		name:  names.Registry,
		keys:  []types.KeySchemaElement{hashKey(attrServerID)},
		attrs: []types.AttributeDefinition{strAttr(attrServerID)},
	}, {
		name:  names.CallSeq,
		keys:  []types.KeySchemaElement{hashKey(attrFromTool), rangeKey(attrToTool)},
		attrs: []types.AttributeDefinition{strAttr(attrFromTool), strAttr(attrToTool)},
	}, {
		name:  names.Vault,
		keys:  []types.KeySchemaElement{hashKey(attrVaultPrincipal), rangeKey(attrVaultServer)},
		attrs: []types.AttributeDefinition{strAttr(attrVaultPrincipal), strAttr(attrVaultServer)},
		ttl:   attrExpiresAt,
	}, {
		name:  names.Sessions,
		keys:  []types.KeySchemaElement{hashKey(attrSessionID)},
		attrs: []types.AttributeDefinition{strAttr(attrSessionID)},
		ttl:   attrExpiresAt,
	}}
	var out []tableSpec
	for _, t := range all {
		if t.name != "" {
			out = append(out, t)
		}
	}
	return out
}

// CreateTables creates the tables named in names (empty names are skipped)
// with on-demand billing, waits until each is ACTIVE and enables TTL on the
// sessions and vault tables. Tables that already exist are fine when their key schema
// matches; a mismatch is an error. Emulators without UpdateTimeToLive
// (dynalite) are tolerated: sessions are filtered by expires_at on read.
func CreateTables(ctx context.Context, client *dynamodb.Client, names Tables) error {
	for _, spec := range specs(names) {
		if err := createTable(ctx, client, spec); err != nil {
			return err
		}
	}
	return nil
}

func createTable(ctx context.Context, client *dynamodb.Client, spec tableSpec) error {
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.name)})
	var notFound *types.ResourceNotFoundException
	switch {
	case err == nil:
		if err := checkKeys(spec, desc.Table); err != nil {
			return err
		}
	case errors.As(err, &notFound):
		_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:              aws.String(spec.name),
			KeySchema:              spec.keys,
			AttributeDefinitions:   spec.attrs,
			GlobalSecondaryIndexes: spec.gsis,
			BillingMode:            types.BillingModePayPerRequest,
		})
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create DynamoDB table %s: %w", spec.name, err)
		}
	default:
		return fmt.Errorf("describe DynamoDB table %s: %w", spec.name, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(spec.name)}, 5*time.Minute); err != nil {
		return fmt.Errorf("wait for DynamoDB table %s to become ACTIVE: %w", spec.name, err)
	}
	if spec.ttl != "" {
		return enableTTL(ctx, client, spec.name, spec.ttl)
	}
	return nil
}

func checkKeys(spec tableSpec, t *types.TableDescription) error {
	want := map[string]types.KeyType{}
	for _, k := range spec.keys {
		want[*k.AttributeName] = k.KeyType
	}
	ok := len(t.KeySchema) == len(want)
	for _, k := range t.KeySchema {
		if want[aws.ToString(k.AttributeName)] != k.KeyType {
			ok = false
		}
	}
	if !ok {
		var got []string
		for _, k := range t.KeySchema {
			got = append(got, fmt.Sprintf("%s (%s)", aws.ToString(k.AttributeName), k.KeyType))
		}
		var exp []string
		for _, k := range spec.keys {
			exp = append(exp, fmt.Sprintf("%s (%s)", aws.ToString(k.AttributeName), k.KeyType))
		}
		return fmt.Errorf("DynamoDB table %s exists with key schema %v, but the gateway needs %v", spec.name, got, exp)
	}
	for _, g := range spec.gsis {
		found := false
		for _, have := range t.GlobalSecondaryIndexes {
			if aws.ToString(have.IndexName) == aws.ToString(g.IndexName) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("DynamoDB table %s exists without the global secondary index %s", spec.name, aws.ToString(g.IndexName))
		}
	}
	return nil
}

func enableTTL(ctx context.Context, client *dynamodb.Client, table, attr string) error {
	d, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err == nil && d.TimeToLiveDescription != nil {
		st := d.TimeToLiveDescription.TimeToLiveStatus
		if (st == types.TimeToLiveStatusEnabled || st == types.TimeToLiveStatusEnabling) &&
			aws.ToString(d.TimeToLiveDescription.AttributeName) == attr {
			return nil
		}
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attr),
			Enabled:       aws.Bool(true),
		},
	})
	switch code := apiCode(err); {
	case err == nil:
		return nil
	case code == "UnknownOperationException":
		return nil // emulator without TTL support; reads filter on expires_at anyway
	case code == "ValidationException":
		// "TimeToLive is already enabled" races with another CreateTables.
		d, derr := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		if derr == nil && d.TimeToLiveDescription != nil && aws.ToString(d.TimeToLiveDescription.AttributeName) == attr {
			return nil
		}
		return fmt.Errorf("enable TTL on %s.%s: %w", table, attr, err)
	default:
		return fmt.Errorf("enable TTL on %s.%s: %w", table, attr, err)
	}
}
