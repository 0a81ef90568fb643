package rerank

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime/types"
)

// RerankAPI is the part of *bedrockagentruntime.Client the bedrock
// reranker uses.
type RerankAPI interface {
	Rerank(ctx context.Context, in *bedrockagentruntime.RerankInput, optFns ...func(*bedrockagentruntime.Options)) (*bedrockagentruntime.RerankOutput, error)
}

func validBedrockModel(m string) error {
	switch {
	case m == BedrockAmazonRerank, m == BedrockCohereRerank:
		return nil
	case strings.HasPrefix(m, "arn:"):
		return nil
	default:
		return fmt.Errorf("not one of %s, %s or a model ARN", BedrockAmazonRerank, BedrockCohereRerank)
	}
}

// ModelARN returns the foundation-model ARN of a Bedrock model id in region.
func ModelARN(region, modelID string) string {
	if strings.HasPrefix(modelID, "arn:") {
		return modelID
	}
	return "arn:aws:bedrock:" + region + "::foundation-model/" + modelID
}

type bedrockReranker struct {
	client  RerankAPI
	arn     string
	timeout time.Duration
}

// NewBedrock returns a reranker calling the Bedrock Agent Runtime Rerank API
// with cfg.BedrockModel in cfg.Region (or the SDK default region).
func NewBedrock(ctx context.Context, cfg Config) (Reranker, error) {
	model := cfg.BedrockModel
	if model == "" {
		model = BedrockAmazonRerank
	}
	if err := validBedrockModel(model); err != nil {
		return nil, fmt.Errorf("rerank: Bedrock model %q: %w", model, err)
	}
	region := cfg.Region
	client := cfg.BedrockClient
	if c, ok := client.(*bedrockagentruntime.Client); ok && region == "" {
		region = c.Options().Region
	}
	if client == nil {
		var opts []func(*config.LoadOptions) error
		if region != "" {
			opts = append(opts, config.WithRegion(region))
		}
		awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("rerank: loading the AWS configuration for Bedrock: %w", err)
		}
		region = awsCfg.Region
		client = bedrockagentruntime.NewFromConfig(awsCfg)
	}
	if region == "" && !strings.HasPrefix(model, "arn:") {
		return nil, errors.New("rerank: no AWS region for Bedrock: set AWS_REGION")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &bedrockReranker{client: client, arn: ModelARN(region, model), timeout: timeout}, nil
}

func (r *bedrockReranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	if err := checkShortlist(docs); err != nil {
		return nil, err
	}
	scores := make([]float64, len(docs))
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("rerank: the query is empty")
	}
	// Blank documents are not sent (Bedrock rejects them); they score 0.
	var sources []types.RerankSource
	var pos []int
	for i, d := range docs {
		if strings.TrimSpace(d) == "" {
			continue
		}
		sources = append(sources, types.RerankSource{
			Type: types.RerankSourceTypeInline,
			InlineDocumentSource: &types.RerankDocument{
				Type:         types.RerankDocumentTypeText,
				TextDocument: &types.RerankTextDocument{Text: aws.String(d)},
			},
		})
		pos = append(pos, i)
	}
	if len(sources) == 0 {
		return scores, nil
	}
	in := &bedrockagentruntime.RerankInput{
		Queries: []types.RerankQuery{{
			Type:      types.RerankQueryContentTypeText,
			TextQuery: &types.RerankTextDocument{Text: aws.String(query)},
		}},
		Sources: sources,
		RerankingConfiguration: &types.RerankingConfiguration{
			Type: types.RerankingConfigurationTypeBedrockRerankingModel,
			BedrockRerankingConfiguration: &types.BedrockRerankingConfiguration{
				NumberOfResults:    aws.Int32(int32(len(sources))),
				ModelConfiguration: &types.BedrockRerankingModelConfiguration{ModelArn: aws.String(r.arn)},
			},
		},
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	seen := make([]bool, len(sources))
	for page := 0; ; page++ {
		out, err := r.client.Rerank(cctx, in)
		if err != nil {
			if cctx.Err() != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("rerank: Bedrock %s did not answer within %s: %w", r.arn, r.timeout, err)
			}
			return nil, fmt.Errorf("rerank: Bedrock %s: %w", r.arn, err)
		}
		for _, res := range out.Results {
			if res.Index == nil || res.RelevanceScore == nil {
				return nil, fmt.Errorf("rerank: Bedrock %s returned a result without index or score", r.arn)
			}
			i := int(*res.Index)
			if i < 0 || i >= len(sources) || seen[i] {
				return nil, fmt.Errorf("rerank: Bedrock %s returned an invalid or repeated index %d for %d documents", r.arn, i, len(sources))
			}
			seen[i] = true
			scores[pos[i]] = float64(*res.RelevanceScore)
		}
		if out.NextToken == nil || *out.NextToken == "" || page >= len(sources) {
			break
		}
		in.NextToken = out.NextToken
	}
	return scores, nil
}
