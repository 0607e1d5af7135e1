// A ModelSpec as Megatron-LM's model-definition flags (pretrain_gpt.py at d98e8a64): shape,
// attention, activation, norms, positions, vocabulary padding, MoE routing, MLA and MTP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace tessera {

// `tp` fixes the vocabulary padding (Megatron pads to a multiple of
// make_vocab_size_divisible_by x tp); `seq_len` is the training sequence, which
// --max-position-embeddings must cover. Throws Error naming the model field Megatron cannot
// express (ALiBi, soft-capping, a llama3 RoPE scaling other than Megatron's fixed one, ...).
std::vector<std::string> megatron_model_flags(const ModelSpec& model, std::int64_t tp, std::int64_t seq_len);

// The vocabulary Megatron builds: the model's, rounded up to a multiple of tp (its vocab-parallel
// embedding splits rows evenly).
std::int64_t megatron_padded_vocab(std::int64_t vocab, std::int64_t tp);
// The largest power of two up to Megatron's default 128 with divisor x tp dividing the padded
// vocabulary, so that Megatron's own padding agrees with --padded-vocab-size.
std::int64_t megatron_vocab_divisor(std::int64_t vocab, std::int64_t tp);

// Appends `flag` and its value as two arguments (a double in its shortest exact form).
void add_flag(std::vector<std::string>& out, const char* flag, std::int64_t value);
void add_flag(std::vector<std::string>& out, const char* flag, double value);
void add_flag(std::vector<std::string>& out, const char* flag, const char* value);

}  // namespace tessera
