// TextTokenizer: text to token ids with a SentencePiece model (Kudo & Richardson 2018), the
// tokenizer format of Llama 2, T5, Gemma and most multimodal LLM backbones, so the data service
// counts and produces the same ids as the model it feeds. SentencePiece runs inside Tessera's
// SentencePiece module, loaded on its own (preprocess/sentencepiece_c_api.h says why).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct SentencePieceModule;  // the loaded module's entry points (text_tokenizer.cpp)

class TextTokenizer {
 public:
  // Loads a .model file written by spm_train; a missing or invalid file throws
  // Error("tokenizer", ...) naming the path.
  static TextTokenizer load(const std::string& model_path);

  TextTokenizer(TextTokenizer&&) noexcept;
  TextTokenizer& operator=(TextTokenizer&&) noexcept;
  ~TextTokenizer();

  // Token ids, each in [0, vocab_size()). Thread-safe: SentencePiece's Encode is const.
  std::vector<std::int32_t> encode(std::string_view text) const;
  // The text for ids (the inverse of encode for text the model can represent; ids out of range
  // throw Error("token ids", ...)).
  std::string decode(std::span<const std::int32_t> ids) const;
  int vocab_size() const;

 private:
  TextTokenizer(const SentencePieceModule* module, void* model);
  const SentencePieceModule* module_ = nullptr;
  void* model_ = nullptr;
};

// Trains a BPE model of `vocab_size` pieces on a text file (one sentence per line) as spm_train
// does, writing PREFIX.model and PREFIX.vocab. Error("tokenizer", ...) when training fails.
void train_tokenizer(const std::string& corpus_path, const std::string& model_prefix, int vocab_size);

}  // namespace tessera
