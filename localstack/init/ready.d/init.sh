#!/usr/bin/env bash
# Creates the toolrag tables and index bucket in LocalStack (run by
# LocalStack from /etc/localstack/init/ready.d when it is ready).
# Idempotent: existing tables and buckets are left alone.
#
# Outside LocalStack, point it at any endpoint:
#   AWS_CMD="aws --endpoint-url http://127.0.0.1:8000" localstack/init/ready.d/init.sh
set -euo pipefail

stage=${TOOLRAG_STAGE:-local}
aws_cmd=${AWS_CMD:-awslocal}
tools=${TOOL_RAG_TOOLS_TABLE:-toolrag-$stage-tools}
keys=${TOOL_RAG_KEYS_TABLE:-toolrag-$stage-keys}
registry=${TOOL_RAG_REGISTRY_TABLE:-toolrag-$stage-registry}
sessions=${TOOL_RAG_SESSIONS_TABLE:-toolrag-$stage-sessions}
bucket=${TOOL_RAG_INDEX_BUCKET:-toolrag-$stage-index}
prefix=${TOOL_RAG_INDEX_PREFIX:-index/}

aws() { $aws_cmd "$@"; }

table_exists() { aws dynamodb describe-table --table-name "$1" >/dev/null 2>&1; }

create_table() { # name, then create-table arguments
  local name=$1; shift
  if table_exists "$name"; then
    echo "init: table $name exists"
    return
  fi
  aws dynamodb create-table --table-name "$name" --billing-mode PAY_PER_REQUEST "$@" >/dev/null
  aws dynamodb wait table-exists --table-name "$name"
  echo "init: created table $name"
}

create_table "$tools" \
  --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=S \
  --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE

create_table "$keys" \
  --attribute-definitions AttributeName=secret_hash,AttributeType=S AttributeName=key_id,AttributeType=S \
  --key-schema AttributeName=secret_hash,KeyType=HASH \
  --global-secondary-indexes 'IndexName=byId,KeySchema=[{AttributeName=key_id,KeyType=HASH}],Projection={ProjectionType=ALL}'

create_table "$registry" \
  --attribute-definitions AttributeName=server_id,AttributeType=S \
  --key-schema AttributeName=server_id,KeyType=HASH

create_table "$sessions" \
  --attribute-definitions AttributeName=session_id,AttributeType=S \
  --key-schema AttributeName=session_id,KeyType=HASH
aws dynamodb update-time-to-live --table-name "$sessions" \
  --time-to-live-specification Enabled=true,AttributeName=expires_at >/dev/null 2>&1 \
  || echo "init: TTL on $sessions already set (or not supported by this emulator)"

if aws s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
  echo "init: bucket $bucket exists"
else
  aws s3api create-bucket --bucket "$bucket" >/dev/null
  echo "init: created bucket $bucket"
fi
aws s3api put-bucket-versioning --bucket "$bucket" --versioning-configuration Status=Enabled
aws s3api put-bucket-encryption --bucket "$bucket" \
  --server-side-encryption-configuration '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}' \
  2>/dev/null || echo "init: bucket encryption not supported by this emulator; skipped"
aws s3api put-public-access-block --bucket "$bucket" \
  --public-access-block-configuration BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true \
  2>/dev/null || echo "init: public access block not supported by this emulator; skipped"
aws s3api put-bucket-lifecycle-configuration --bucket "$bucket" --lifecycle-configuration "{\"Rules\":[
  {\"ID\":\"expire-noncurrent-versions\",\"Status\":\"Enabled\",\"Filter\":{\"Prefix\":\"\"},\"NoncurrentVersionExpiration\":{\"NoncurrentDays\":30}},
  {\"ID\":\"expire-superseded-indexes\",\"Status\":\"Enabled\",\"Filter\":{\"And\":{\"Prefix\":\"${prefix}indexes/\",\"Tags\":[{\"Key\":\"superseded\",\"Value\":\"true\"}]}},\"Expiration\":{\"Days\":30}}]}" \
  2>/dev/null || echo "init: lifecycle rules not supported by this emulator; skipped"

echo "init: ready (tables $tools, $keys, $registry, $sessions; bucket $bucket)"
