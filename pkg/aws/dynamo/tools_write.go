package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/writeplan"
)

// Writing the tools table: staged replaces, stale marks, deletes.

var errRetry = errors.New("retry")

// retryWrites runs op until it stops asking for a retry.
func (s *ToolStore) retryWrites(ctx context.Context, what string, op func() error) error {
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		err := op()
		if !errors.Is(err, errRetry) {
			return err
		}
		s.Metrics.add(s.Metrics.conflicts())
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return fmt.Errorf("%s: %w: other writers changed the server %d times in a row", what, ErrConflict, maxWriteAttempts)
}

func (s *ToolStore) metaCondition(m *toolMeta) (string, item) {
	if m == nil {
		return "attribute_not_exists(pk)", nil
	}
	return "version = :v AND attribute_not_exists(applying) AND attribute_not_exists(deleting)", item{":v": avN(m.version)}
}

// ReplaceServerTools implements catalog.Store.
func (s *ToolStore) ReplaceServerTools(ctx context.Context, srv catalog.Server, tools []catalog.Tool) (changed, deleted []string, err error) {
	srv, next, err := writeplan.Prepare(srv, tools, s.now())
	if err != nil {
		return nil, nil, err
	}
	for _, t := range next {
		if size := itemSize(encodeTool(t, toolPrefix+t.Name)); size > maxItemSize-1024 {
			return nil, nil, fmt.Errorf("tool %q is %d KB, over DynamoDB's 400 KB item limit (its input schema is too large)", t.ID, size>>10)
		}
	}
	err = s.retryWrites(ctx, fmt.Sprintf("replace tools of server %q", srv.ID), func() error {
		var err error
		changed, deleted, err = s.replaceOnce(ctx, srv, next)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return changed, deleted, nil
}

func (s *ToolStore) replaceOnce(ctx context.Context, srv catalog.Server, next []catalog.Tool) (changed, deleted []string, err error) {
	sn, vis, err := s.readVerified(ctx, srv.ID)
	inconsistent := errors.Is(err, ErrInconsistent)
	if err != nil && !inconsistent {
		return nil, nil, err
	}
	m := sn.meta
	if m != nil && m.deleting {
		if err := s.finishDelete(ctx, srv.ID, m.version); err != nil {
			return nil, nil, err
		}
		return nil, nil, errRetry
	}
	if m != nil && m.applying != "" {
		if inconsistent {
			return nil, nil, fmt.Errorf("server %q has an incomplete staged change %s: %w; delete the server (it is re-created by the next sync)", srv.ID, m.applying, ErrInconsistent)
		}
		if err := s.rollForward(ctx, sn, vis); err != nil {
			return nil, nil, err
		}
		return nil, nil, errRetry
	}
	s.cleanupAbandoned(ctx, sn)

	// Diff against the physical items; after an inconsistent read every
	// tool is rewritten, which repairs the server.
	current := map[string]writeplan.Current{}
	for id, t := range sn.tools {
		c := writeplan.Current{ContentHash: t.ContentHash, Stale: m != nil && m.srv.Status != catalog.StatusActive}
		if inconsistent {
			c.ContentHash = ""
		}
		current[id] = c
	}
	d := writeplan.Diff(current, next)
	target := make(map[string]catalog.Tool, len(next))
	for _, t := range d.Write {
		target[t.ID] = t
	}
	for _, ids := range [][]string{d.Keep, d.Reactivate} {
		for _, id := range ids {
			target[id] = sn.tools[id]
		}
	}
	newMeta := toolMeta{srv: srv, version: s.nextVersion(m), digest: digest(target), count: len(target)}
	if m != nil {
		for _, id := range d.Delete {
			if _, ok := vis[id]; ok {
				deleted = append(deleted, id)
			}
		}
	}
	changed = d.Changed

	var writes []types.TransactWriteItem
	size := 0
	for _, t := range d.Write {
		it := encodeTool(t, toolPrefix+t.Name)
		size += itemSize(it)
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: it}})
	}
	for _, id := range d.Delete {
		writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
			Key: item{attrPK: avS(serverPK(srv.ID)), attrSK: avS(toolPrefix + sn.tools[id].Name)}}})
		size += 100
	}
	cond, vals := s.metaCondition(m)
	if len(writes)+1 <= maxTransact && size < txSizeBudget {
		metaPut := &types.Put{TableName: aws.String(s.table), Item: encodeMeta(newMeta), ConditionExpression: aws.String(cond)}
		if vals != nil {
			metaPut.ExpressionAttributeValues = vals
		}
		writes = append(writes, types.TransactWriteItem{Put: metaPut})
		if s.beforeCommit != nil {
			s.beforeCommit(srv.ID)
		}
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems:      writes,
			ClientRequestToken: aws.String(randomID() + randomID()),
		})
		if err != nil {
			if conflict, _ := txOutcome(err); conflict {
				return nil, nil, errRetry
			}
			return nil, nil, fmt.Errorf("write tools of server %q: %w", srv.ID, err)
		}
		return changed, deleted, nil
	}

	// Too big for one transaction: stage, publish, apply.
	stageID := randomID()
	stagedAt := s.now().Unix()
	var reqs []types.WriteRequest
	var stageKeys []item
	for _, t := range d.Write {
		it := encodeTool(t, stagePrefix+stageID+"#"+t.Name)
		it["staged_at"] = avN(stagedAt)
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		stageKeys = append(stageKeys, item{attrPK: it[attrPK], attrSK: it[attrSK]})
	}
	for _, id := range d.Delete {
		it := item{attrPK: avS(serverPK(srv.ID)), attrSK: avS(stagePrefix + stageID + "#" + sn.tools[id].Name),
			"removed": avBool(true), "staged_at": avN(stagedAt)}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		stageKeys = append(stageKeys, item{attrPK: it[attrPK], attrSK: it[attrSK]})
	}
	if err := batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed()); err != nil {
		return nil, nil, fmt.Errorf("stage tools of server %q: %w", srv.ID, err)
	}
	newMeta.applying = stageID
	if s.beforeCommit != nil {
		s.beforeCommit(srv.ID)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: encodeMeta(newMeta), ConditionExpression: aws.String(cond)}
	if vals != nil {
		in.ExpressionAttributeValues = vals
	}
	if _, err := s.client.PutItem(ctx, in); err != nil {
		_ = s.deleteKeys(ctx, stageKeys)
		if isConditionFailed(err) {
			return nil, nil, errRetry
		}
		return nil, nil, fmt.Errorf("publish tools of server %q: %w", srv.ID, err)
	}
	// From here on readers see the new tools; the rest only moves them
	// into place, and any instance can finish it.
	if s.afterFlip != nil {
		if err := s.afterFlip(srv.ID); err != nil {
			return nil, nil, err
		}
	}
	var deletes []string
	for _, id := range d.Delete {
		deletes = append(deletes, sn.tools[id].Name)
	}
	if err := s.apply(ctx, srv.ID, stageID, d.Write, deletes, stageKeys); err != nil {
		return nil, nil, err
	}
	return changed, deleted, nil
}

// rollForward finishes a staged change another writer published but did
// not apply. vis is the verified visible set (the change's target).
func (s *ToolStore) rollForward(ctx context.Context, sn *partitionRead, vis map[string]catalog.Tool) error {
	var puts []catalog.Tool
	var deletes []string
	for id, t := range vis {
		cur, ok := sn.tools[id]
		if !ok || cur.ContentHash != t.ContentHash || !cur.UpdatedAt.Equal(t.UpdatedAt) {
			puts = append(puts, t)
		}
	}
	for id, t := range sn.tools {
		if _, ok := vis[id]; !ok {
			deletes = append(deletes, t.Name)
		}
	}
	var stageKeys []item
	for _, e := range sn.stage[sn.meta.applying] {
		stageKeys = append(stageKeys, e.key)
	}
	return s.apply(ctx, sn.id, sn.meta.applying, puts, deletes, stageKeys)
}

// apply moves a published stage into place: transactions of at most 99
// tool writes, each guarded by "the stage is still being applied", then
// clears the stage mark and deletes the stage items. It is idempotent and
// safe to run from several instances at once.
func (s *ToolStore) apply(ctx context.Context, serverID, stageID string, puts []catalog.Tool, deletes []string, stageKeys []item) error {
	guard := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("applying = :x"),
		ExpressionAttributeValues: item{":x": avS(stageID)},
	}}
	var chunk []types.TransactWriteItem
	size := 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		actions := append(chunk, guard)
		chunk, size = nil, 0
		for attempt := 0; ; attempt++ {
			_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
				TransactItems:      actions,
				ClientRequestToken: aws.String(randomID() + randomID()),
			})
			if err == nil {
				return nil
			}
			conflict, reasons := txOutcome(err)
			if !conflict {
				return fmt.Errorf("apply staged tools of server %q: %w", serverID, err)
			}
			if len(reasons) == len(actions) && reasons[len(reasons)-1] == "ConditionalCheckFailed" {
				return errStageDone // another instance finished (or the server is being deleted)
			}
			s.Metrics.add(s.Metrics.conflicts())
			if attempt+1 >= maxWriteAttempts {
				return fmt.Errorf("apply staged tools of server %q: %w", serverID, ErrConflict)
			}
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		}
	}
	add := func(w types.TransactWriteItem, n int) error {
		if len(chunk)+1 >= maxTransact || size+n >= txSizeBudget {
			if err := flush(); err != nil {
				return err
			}
		}
		chunk = append(chunk, w)
		size += n
		return nil
	}
	err := func() error {
		for _, t := range puts {
			it := encodeTool(t, toolPrefix+t.Name)
			if err := add(types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: it}}, itemSize(it)); err != nil {
				return err
			}
		}
		for _, name := range deletes {
			if err := add(types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
				Key: item{attrPK: avS(serverPK(serverID)), attrSK: avS(toolPrefix + name)}}}, 100); err != nil {
				return err
			}
		}
		return flush()
	}()
	if errors.Is(err, errStageDone) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		UpdateExpression:          aws.String("REMOVE applying"),
		ConditionExpression:       aws.String("applying = :x"),
		ExpressionAttributeValues: item{":x": avS(stageID)},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("finish staged tools of server %q: %w", serverID, err)
	}
	if err := s.deleteKeys(ctx, stageKeys); err != nil {
		return fmt.Errorf("clean up staged tools of server %q: %w", serverID, err)
	}
	return nil
}

var errStageDone = errors.New("stage already applied")

func (s *ToolStore) deleteKeys(ctx context.Context, keys []item) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	return batchWrite(ctx, s.client, s.table, reqs, s.Metrics.unprocessed())
}

// cleanupAbandoned deletes stage items of writes that never published
// (their writer crashed or lost a race) once they are staleStageAge old.
func (s *ToolStore) cleanupAbandoned(ctx context.Context, sn *partitionRead) {
	cutoff := s.now().Add(-staleStageAge).Unix()
	var keys []item
	for x, entries := range sn.stage {
		if sn.meta != nil && x == sn.meta.applying {
			continue
		}
		if sn.stagedAt[x] > cutoff {
			continue
		}
		for _, e := range entries {
			keys = append(keys, e.key)
		}
	}
	if len(keys) > 0 {
		_ = s.deleteKeys(ctx, keys) // best effort; retried by the next sync
	}
}

// MarkServerStale implements catalog.Store. Only the meta item changes:
// tools take their status from it. A server that never synced gets a meta
// item with no tools.
func (s *ToolStore) MarkServerStale(ctx context.Context, serverID, reason string) error {
	if err := catalog.ValidServerID(serverID); err != nil {
		return err
	}
	return s.retryWrites(ctx, fmt.Sprintf("mark server %q stale", serverID), func() error {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: metaKey(serverID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("mark server %q stale: %w", serverID, err)
		}
		if out.Item == nil {
			m := toolMeta{srv: catalog.Server{ID: serverID, Status: catalog.StatusStale, LastError: reason},
				version: s.nextVersion(nil), digest: digest(nil)}
			_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: encodeMeta(m),
				ConditionExpression: aws.String("attribute_not_exists(pk)")})
		} else {
			m := decodeMeta(out.Item)
			if m.deleting {
				if err := s.finishDelete(ctx, serverID, m.version); err != nil {
					return err
				}
				return errRetry
			}
			_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(s.table),
				Key:                       metaKey(serverID),
				UpdateExpression:          aws.String("SET #st = :stale, last_error = :err, version = :nv"),
				ConditionExpression:       aws.String("version = :v AND attribute_not_exists(deleting)"),
				ExpressionAttributeNames:  map[string]string{"#st": "status"},
				ExpressionAttributeValues: item{":stale": avS(catalog.StatusStale), ":err": avS(reason), ":nv": avN(s.nextVersion(&m)), ":v": avN(m.version)},
			})
		}
		if isConditionFailed(err) {
			return errRetry
		}
		if err != nil {
			return fmt.Errorf("mark server %q stale: %w", serverID, err)
		}
		return nil
	})
}

// DeleteServer implements catalog.Store: the meta item is marked deleting
// (readers stop seeing the server at once), the items are deleted, then
// the meta item. Deleting an unknown server is not an error.
func (s *ToolStore) DeleteServer(ctx context.Context, serverID string) error {
	if catalog.StoredServerID(serverID) != nil {
		return nil // no such server can exist
	}
	return s.retryWrites(ctx, fmt.Sprintf("delete server %q", serverID), func() error {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: metaKey(serverID), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("delete server %q: %w", serverID, err)
		}
		if out.Item == nil {
			return nil
		}
		m := decodeMeta(out.Item)
		if !m.deleting {
			nv := s.nextVersion(&m)
			_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(s.table),
				Key:                       metaKey(serverID),
				UpdateExpression:          aws.String("SET deleting = :t, version = :nv REMOVE applying"),
				ConditionExpression:       aws.String("version = :v"),
				ExpressionAttributeValues: item{":t": avBool(true), ":nv": avN(nv), ":v": avN(m.version)},
			})
			if isConditionFailed(err) {
				return errRetry
			}
			if err != nil {
				return fmt.Errorf("delete server %q: %w", serverID, err)
			}
			m.version = nv
		}
		return s.finishDelete(ctx, serverID, m.version)
	})
}

// finishDelete deletes every item of a server whose meta item is marked
// deleting at version. Each batch of deletes is guarded by that mark, so
// a slow instance cannot delete items of a re-created server.
func (s *ToolStore) finishDelete(ctx context.Context, serverID string, version int64) error {
	sn, err := s.readPartition(ctx, serverID)
	if err != nil {
		return err
	}
	guard := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("deleting = :t AND version = :v"),
		ExpressionAttributeValues: item{":t": avBool(true), ":v": avN(version)},
	}}
	var keys []item
	for _, t := range sn.tools {
		keys = append(keys, item{attrPK: avS(serverPK(serverID)), attrSK: avS(toolPrefix + t.Name)})
	}
	var stageKeys []item
	for _, entries := range sn.stage {
		for _, e := range entries {
			stageKeys = append(stageKeys, e.key)
		}
	}
	for len(keys) > 0 {
		k := min(len(keys), maxTransact-1)
		actions := make([]types.TransactWriteItem, 0, k+1)
		for _, key := range keys[:k] {
			actions = append(actions, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key}})
		}
		actions = append(actions, guard)
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions,
			ClientRequestToken: aws.String(randomID() + randomID())})
		if err != nil {
			if conflict, _ := txOutcome(err); conflict {
				return errRetry
			}
			return fmt.Errorf("delete tools of server %q: %w", serverID, err)
		}
		keys = keys[k:]
	}
	if err := s.deleteKeys(ctx, stageKeys); err != nil {
		return fmt.Errorf("delete staged tools of server %q: %w", serverID, err)
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       metaKey(serverID),
		ConditionExpression:       aws.String("deleting = :t AND version = :v"),
		ExpressionAttributeValues: item{":t": avBool(true), ":v": avN(version)},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("delete server %q: %w", serverID, err)
	}
	return nil
}
