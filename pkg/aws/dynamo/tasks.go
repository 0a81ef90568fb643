package dynamo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

// Task records (session.TaskStore) live in the sessions table under the
// key "task#<id>", which no session id can take (session ids are
// mcp-session-<hex>), with the task's principal, its expiry as expires_at
// (the table's TTL) and the record as JSON in "task". ListTasks scans
// the table for the principal's tasks: tasks/list is rare, and a deployment's
// table holds its live sessions and tasks only.

var _ session.TaskStore = (*SessionStore)(nil)

const (
	taskKeyPrefix = "task#"
	attrTask      = "task"
)

func (s *SessionStore) taskItem(t session.Task) (item, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return item{attrSessionID: avS(taskKeyPrefix + t.ID), attrPrincipal: avS(t.Principal),
		attrExpiresAt: avN(t.Expires.Unix()), attrTask: avS(string(raw))}, nil
}

// PutTask implements session.TaskStore.
func (s *SessionStore) PutTask(ctx context.Context, t session.Task) error {
	it, err := s.taskItem(t)
	if err != nil {
		return err
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it}); err != nil {
		return fmt.Errorf("record task: %w", err)
	}
	return nil
}

// UpdateTask implements session.TaskStore: the write is conditional on the
// stored task not having ended.
func (s *SessionStore) UpdateTask(ctx context.Context, t session.Task) error {
	it, err := s.taskItem(t)
	if err != nil {
		return err
	}
	it["ended"] = avN(0)
	if t.Ended() {
		it["ended"] = avN(1)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it,
		ConditionExpression:       aws.String("attribute_not_exists(ended) OR ended = :no"),
		ExpressionAttributeValues: item{":no": avN(0)}})
	if isConditionFailed(err) {
		return session.ErrTaskEnded
	}
	if err != nil {
		return fmt.Errorf("update task: %w", err)
	}
	return nil
}

func taskOf(it item) (session.Task, bool) {
	var t session.Task
	if json.Unmarshal([]byte(getS(it, attrTask)), &t) != nil || t.ID == "" {
		return session.Task{}, false
	}
	return t, true
}

// GetTask implements session.TaskStore.
func (s *SessionStore) GetTask(ctx context.Context, id string) (session.Task, bool, error) {
	if id == "" {
		return session.Task{}, false, nil
	}
	it, err := s.get(ctx, taskKeyPrefix+id)
	if err != nil || it == nil {
		return session.Task{}, false, err
	}
	t, ok := taskOf(it)
	return t, ok, nil
}

// ListTasks implements session.TaskStore.
func (s *SessionStore) ListTasks(ctx context.Context, principal string) ([]session.Task, error) {
	items, err := scanAll(ctx, s.client, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(session_id, :pre) AND principal = :p AND expires_at > :now"),
		ExpressionAttributeValues: item{":pre": avS(taskKeyPrefix), ":p": avS(principal), ":now": avN(s.now())}})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	var out []session.Task
	for _, it := range items {
		if t, ok := taskOf(it); ok {
			out = append(out, t)
		}
	}
	session.SortTasks(out)
	return out, nil
}
