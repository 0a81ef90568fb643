package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// attrSurface holds a server's prompts and resources as the sync function
// listed them: gzip-compressed JSON (binary), so that gateways build their
// MCP surface without contacting any upstream.
const attrSurface = "surface_gz"

// MaxSurfaceBytes bounds a stored surface (compressed) well under
// DynamoDB's 400 KB item limit, leaving room for the config and health.
const MaxSurfaceBytes = 300 << 10

// SetSurface stores a server's surface document (JSON) on its registry
// item; an unregistered id gives an error wrapping catalog.ErrNotFound.
func (s *RegistryStore) SetSurface(ctx context.Context, id string, doc json.RawMessage) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(doc)
	if err := zw.Close(); err != nil {
		return fmt.Errorf("registry: compress the surface of %q: %w", id, err)
	}
	if buf.Len() > MaxSurfaceBytes {
		return fmt.Errorf("registry: the prompts and resources of %q are %d bytes compressed, over the %d bytes a registry item can hold", id, buf.Len(), MaxSurfaceBytes)
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       item{attrServerID: avS(id)},
		UpdateExpression:          aws.String("SET " + attrSurface + " = :b"),
		ConditionExpression:       aws.String("attribute_exists(server_id)"),
		ExpressionAttributeValues: item{":b": &types.AttributeValueMemberB{Value: buf.Bytes()}},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("server %q is not in the registry: %w", id, catalog.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("registry: store the surface of %q: %w", id, err)
	}
	return nil
}

// Surfaces returns the stored surface document of every server that has
// one, by id. A damaged one is an error naming the server.
func (s *RegistryStore) Surfaces(ctx context.Context) (map[string]json.RawMessage, error) {
	return byServer(ctx, s, func(id string, it item) (json.RawMessage, bool, error) {
		b, ok := it[attrSurface].(*types.AttributeValueMemberB)
		if !ok {
			return nil, false, nil
		}
		zr, err := gzip.NewReader(bytes.NewReader(b.Value))
		if err != nil {
			return nil, false, fmt.Errorf("registry: the stored surface of %q is not gzip: %w", id, err)
		}
		doc, err := io.ReadAll(io.LimitReader(zr, 64<<20))
		if err != nil {
			return nil, false, fmt.Errorf("registry: the stored surface of %q is damaged: %w", id, err)
		}
		return doc, true, nil
	})
}
