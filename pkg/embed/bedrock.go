package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// DefaultBedrockModel is Amazon Titan Text Embeddings V2.
const DefaultBedrockModel = "amazon.titan-embed-text-v2:0"

// InvokeModelAPI is the part of *bedrockruntime.Client the bedrock embedder
// uses.
type InvokeModelAPI interface {
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// BedrockConfig configures Titan Text Embeddings V2 on Amazon Bedrock.
type BedrockConfig struct {
	// ModelID defaults to amazon.titan-embed-text-v2:0.
	ModelID string
	// Dim is 256, 512 or 1024 (default 1024).
	Dim int
	// Concurrency bounds parallel InvokeModel calls (default 8).
	Concurrency int
	// Timeout bounds each call, SDK retries included (default 30s).
	Timeout time.Duration
	// DeadlineMargin, when positive, also stops each call this long
	// before the deadline of its context (on Lambda, the invocation's), so
	// that the caller still has time to answer with the error instead of
	// being stopped by the runtime mid-call.
	DeadlineMargin time.Duration
	// Client defaults to bedrockruntime.NewFromConfig with the SDK's default
	// configuration (region, credentials) plus Region when set.
	Client InvokeModelAPI
	// Region overrides the SDK default region for the default client.
	Region string
}

func validTitanDim(d int) bool { return d == 256 || d == 512 || d == 1024 }

type bedrockEmbedder struct {
	cfg    BedrockConfig
	client InvokeModelAPI
}

// NewBedrock returns a Titan Text Embeddings V2 embedder. It makes no call;
// credentials and region problems surface on the first embedding.
func NewBedrock(ctx context.Context, cfg BedrockConfig) (Embedder, error) {
	if cfg.ModelID == "" {
		cfg.ModelID = DefaultBedrockModel
	}
	if cfg.Dim == 0 {
		cfg.Dim = 1024
	}
	if !validTitanDim(cfg.Dim) {
		return nil, fmt.Errorf("embed: bedrock dimension %d is not one of 256, 512, 1024 (TOOL_RAG_BEDROCK_DIM)", cfg.Dim)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	client := cfg.Client
	if client == nil {
		var opts []func(*config.LoadOptions) error
		if cfg.Region != "" {
			opts = append(opts, config.WithRegion(cfg.Region))
		}
		awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("embed: loading the AWS configuration for Bedrock: %w", err)
		}
		if awsCfg.Region == "" {
			return nil, errors.New("embed: no AWS region for Bedrock: set AWS_REGION")
		}
		client = bedrockruntime.NewFromConfig(awsCfg)
	}
	return &bedrockEmbedder{cfg: cfg, client: client}, nil
}

func (e *bedrockEmbedder) Dim() int { return e.cfg.Dim }

func (e *bedrockEmbedder) ModelID() string {
	return fmt.Sprintf("bedrock:%s:%d", e.cfg.ModelID, e.cfg.Dim)
}

func (e *bedrockEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return e.embedOne(ctx, text)
}

// EmbedDocuments makes one InvokeModel call per text, Concurrency at a
// time; the first failure cancels the rest.
func (e *bedrockEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.cfg.Concurrency)
	for i, t := range texts {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // a call failed while this one waited for its turn
			}
			v, err := e.embedOne(gctx, t)
			out[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	Normalize  bool   `json:"normalize"`
}

type titanResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

// embedOne embeds one text; blank text gets the zero vector without a call
// (Titan rejects empty input).
func (e *bedrockEmbedder) embedOne(ctx context.Context, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return make([]float32, e.cfg.Dim), nil
	}
	body, err := json.Marshal(titanRequest{InputText: text, Dimensions: e.cfg.Dim, Normalize: true})
	if err != nil {
		return nil, fmt.Errorf("embed: encoding the Bedrock request: %w", err)
	}
	timeout := e.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok && e.cfg.DeadlineMargin > 0 {
		if left := time.Until(dl) - e.cfg.DeadlineMargin; left < timeout {
			timeout = max(left, time.Millisecond)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := e.client.InvokeModel(cctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(e.cfg.ModelID),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	})
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("embed: Bedrock model %s did not answer within %s: %w", e.cfg.ModelID, timeout.Round(time.Millisecond), err)
		}
		return nil, fmt.Errorf("embed: Bedrock model %s: %w", e.cfg.ModelID, err)
	}
	var resp titanResponse
	if err := json.Unmarshal(out.Body, &resp); err != nil {
		return nil, fmt.Errorf("embed: Bedrock model %s answered with malformed JSON (%v): %s", e.cfg.ModelID, err, redact.Snippet(out.Body, ""))
	}
	if len(resp.Embedding) != e.cfg.Dim {
		return nil, fmt.Errorf("embed: Bedrock model %s returned a %d-dimensional embedding, want %d", e.cfg.ModelID, len(resp.Embedding), e.cfg.Dim)
	}
	vindex.Normalize(resp.Embedding)
	return resp.Embedding, nil
}
