// Package syncinvoke asks the sync function to re-sync one server: the
// process holding an upstream's connection on AWS (the stdio bridge)
// calls it when the upstream announces a change of its lists. The
// invocation is asynchronous (the sync function's event queue), and the
// payload is the sync event awsrt.ParseSyncEvent reads:
// {"servers":["<id>"],"source":"toolrag-bridge/list_changed"}.
package syncinvoke

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Source is the event's source, which the sync report names as its trigger.
const Source = "toolrag-bridge/list_changed"

// Invoker is the part of the Lambda client that invokes a function.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Payload is the sync event for server id alone.
func Payload(id string) []byte {
	b, _ := json.Marshal(struct {
		Servers []string `json:"servers"`
		Source  string   `json:"source"`
	}{[]string{id}, Source})
	return b
}

// Trigger returns a function that invokes the sync function fn
// asynchronously for the registered server id.
func Trigger(client Invoker, fn, id string) func(ctx context.Context) error {
	payload := Payload(id)
	return func(ctx context.Context) error {
		if _, err := client.Invoke(ctx, &lambda.InvokeInput{
			FunctionName:   aws.String(fn),
			InvocationType: lambdatypes.InvocationTypeEvent,
			Payload:        payload,
		}); err != nil {
			return fmt.Errorf("invoke the sync function %q for server %q: %w", fn, id, err)
		}
		return nil
	}
}
