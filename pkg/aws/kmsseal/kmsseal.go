// Package kmsseal seals the gateway's upstream grants (pkg/vault) and
// connect-link tokens with AWS KMS envelope encryption: each value gets a
// fresh AES-256 data key from KMS GenerateDataKey, is sealed with it under
// AES-256-GCM, and only the KMS-encrypted data key is kept beside it. The
// encryption context (vault.EncryptionContext) names the purpose and, for
// a grant, its principal and server, so KMS refuses to open a row copied to
// another principal or server, and CloudTrail records whose grant was
// opened.
package kmsseal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// KMS is what the sealer needs of a KMS client (*kms.Client).
type KMS interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, opts ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// Format is the seal-key id of values sealed here: the KMS key itself is
// named inside the encrypted data key.
const Format = "kms1"

var errNoKey = errors.New("no KMS key is configured for the token vault (TOOL_RAG_VAULT_KMS_KEY; the stacks set it)")

// Sealer is a vault.Sealer (and upconnect.Sealer) over KMS.
type Sealer struct {
	client KMS
	keyID  string
}

// New returns a Sealer that asks KMS key keyID (id, ARN or alias) for data
// keys.
func New(client KMS, keyID string) *Sealer { return &Sealer{client: client, keyID: keyID} }

// Seal implements vault.Sealer:
// len(encrypted data key) (2 bytes) || encrypted data key || nonce || AES-256-GCM(plaintext, aad).
func (s *Sealer) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, string, error) {
	if s.keyID == "" || s.client == nil {
		return nil, "", errNoKey
	}
	dk, err := s.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: aws.String(s.keyID), KeySpec: types.DataKeySpecAes256,
		EncryptionContext: vault.EncryptionContext(aad),
	})
	if err != nil {
		return nil, "", fmt.Errorf("KMS GenerateDataKey: %w", err)
	}
	defer clear(dk.Plaintext)
	if len(dk.CiphertextBlob) > 0xffff || len(dk.Plaintext) != 32 {
		return nil, "", errors.New("KMS returned an unexpected data key")
	}
	a, err := vault.NewAEAD(dk.Plaintext)
	if err != nil {
		return nil, "", err
	}
	out := make([]byte, 2, 2+len(dk.CiphertextBlob)+len(plaintext)+a.Overhead())
	binary.BigEndian.PutUint16(out, uint16(len(dk.CiphertextBlob)))
	out = append(out, dk.CiphertextBlob...)
	return a.Seal(out, nil, plaintext, aad), Format, nil
}

// Open implements vault.Sealer. KMS refuses the data key when aad's
// encryption context is not the one it was sealed under.
func (s *Sealer) Open(ctx context.Context, sealed []byte, keyID string, aad []byte) ([]byte, error) {
	if s.client == nil {
		return nil, errNoKey
	}
	if keyID != Format {
		return nil, fmt.Errorf("value sealed with %q, not KMS envelope encryption", keyID)
	}
	if len(sealed) < 2 {
		return nil, errors.New("sealed value is too short")
	}
	n := int(binary.BigEndian.Uint16(sealed))
	if len(sealed) < 2+n+12+16 { // nonce and tag: refused before a KMS call
		return nil, errors.New("sealed value is too short")
	}
	edk, rest := sealed[2:2+n], sealed[2+n:]
	dk, err := s.client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: edk, EncryptionContext: vault.EncryptionContext(aad)})
	if err != nil {
		return nil, fmt.Errorf("KMS Decrypt: %w", err)
	}
	defer clear(dk.Plaintext)
	a, err := vault.NewAEAD(dk.Plaintext)
	if err != nil {
		return nil, err
	}
	return vault.OpenAEAD(a, rest, aad)
}
