package awsrt

// The gateway's own MCP tasks on Lambda: a task-augmented tools/call whose
// upstream runs no tasks is answered with the task's handle at once, and
// the call runs in an asynchronous invocation of this same function
// (InvocationType Event, up to the function's 15-minute limit), which
// stores the result in the gateway's bucket (tasks/<id>.json) and the
// outcome in the task record (DynamoDB). tasks/result, on any instance,
// reads it from there.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// taskEvent is the payload of the asynchronous invocation that runs a
// task: the job and the policy of the caller who started it (the
// invocation is made by the function itself, under its own IAM role).
type taskEvent struct {
	Task *struct {
		Job    gateway.TaskJob `json:"job"`
		Policy policy.Policy   `json:"policy"`
	} `json:"toolrag_task"`
}

// lambdaRunner starts a task's call in an asynchronous invocation of the
// gateway function.
type lambdaRunner struct {
	client   *lambda.Client
	function string
}

func (r lambdaRunner) StartTask(ctx context.Context, job gateway.TaskJob) error {
	if r.client == nil || r.function == "" {
		return errors.New("the gateway function does not know its own name to run a task in (AWS_LAMBDA_FUNCTION_NAME or TOOL_RAG_GATEWAY_FUNCTION)")
	}
	pol, _ := policy.FromContext(ctx)
	var ev taskEvent
	ev.Task = &struct {
		Job    gateway.TaskJob `json:"job"`
		Policy policy.Policy   `json:"policy"`
	}{job, pol}
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := r.client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(r.function),
		InvocationType: lambdatypes.InvocationTypeEvent, Payload: payload}); err != nil {
		return fmt.Errorf("invoke %q asynchronously: %w", r.function, err)
	}
	return nil
}

// HandleTask runs a task sent by lambdaRunner (lambdahttp.Dispatch hands
// it events carrying "toolrag_task").
func (g *GatewayFunction) HandleTask(ctx context.Context, raw json.RawMessage) (any, error) {
	var ev taskEvent
	if err := json.Unmarshal(raw, &ev); err != nil || ev.Task == nil {
		return nil, fmt.Errorf("not a task event: %v", err)
	}
	select { // the catalog the call is resolved in
	case <-g.Loaded():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	g.MCP.RunTask(policy.NewContext(ctx, ev.Task.Policy), ev.Task.Job)
	return map[string]string{"task": ev.Task.Job.Task.ID}, nil
}

// taskResults keeps the results of the gateway's own tasks in its bucket
// (the bucket's lifecycle rule, where set, removes them; the record that
// names one expires with the task).
type taskResults struct{ b *s3bucket.Bucket }

func (t taskResults) PutResult(ctx context.Context, taskID string, result []byte) (string, error) {
	key := "tasks/" + taskID + ".json"
	if _, err := t.b.Put(ctx, key, result, indexpub.Cond{}); err != nil {
		return "", err
	}
	return key, nil
}

func (t taskResults) GetResult(ctx context.Context, ref string) ([]byte, error) {
	body, _, err := t.b.Get(ctx, ref, "")
	return body, err
}
